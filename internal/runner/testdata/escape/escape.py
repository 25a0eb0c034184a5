# The escape catalogue (issue 36): an agent program that tries the known
# ways out of a container, each harmlessly, and prints one line per try:
# "NAME: refused (ERRNO)" or "NAME: OPEN (what happened)", then
# "open: N". Harmless means: a kernel file is opened for writing and closed
# without a byte written (core_pattern, sysrq-trigger); a system call gets
# arguments that could do nothing even if it were let through (reboot's
# magic numbers wrong, a module of no bytes); what could change this
# process (a new namespace, a mount) is tried in a child that then exits.
# A call the kernel answers with another error than a refusal (EFAULT for
# a null pointer) counts as open: it got past the filter to the kernel's
# own checks. escape.dryfire.yaml runs it; internal/runner's
# TestEscapeCatalogue and scripts/ci.d/45-sandbox.sh run that suite under
# agent.network: sandboxed and isolated.
import ctypes, errno, glob, os, platform, socket, stat, subprocess, sys

# System call numbers (Linux's uapi tables); internal/runner's
# TestEscapeCatalogueNumbers checks them against go-seccomp-bpf's.
NUMBERS = {
    "x86_64": {
        "unshare": 272, "setns": 308, "mount": 165, "pivot_root": 155, "chroot": 161,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
        "kexec_file_load": 320, "reboot": 169, "bpf": 321, "perf_event_open": 298,
        "add_key": 248, "request_key": 249, "keyctl": 250, "userfaultfd": 323,
        "io_uring_setup": 425, "ptrace": 101, "process_vm_writev": 311,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "personality": 135, "swapon": 167,
        "acct": 163, "syslog": 103, "sethostname": 170, "fsopen": 430, "open_tree": 428,
        "iopl": 172, "ioperm": 173,
    },
    "aarch64": {
        "unshare": 97, "setns": 268, "mount": 40, "pivot_root": 41, "chroot": 51,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104,
        "kexec_file_load": 294, "reboot": 142, "bpf": 280, "perf_event_open": 241,
        "add_key": 217, "request_key": 218, "keyctl": 219, "userfaultfd": 282,
        "io_uring_setup": 425, "ptrace": 117, "process_vm_writev": 271,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "personality": 92, "swapon": 224,
        "acct": 89, "syslog": 116, "sethostname": 161, "fsopen": 430, "open_tree": 428,
    },
}
NR = NUMBERS.get(platform.machine())
if NR is None:
    print("no system call table for " + platform.machine())
    sys.exit(2)

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
REFUSED = {errno.EPERM, errno.EACCES, errno.ENOSYS}  # ENOSYS: the kernel has no such call
FILES = REFUSED | {errno.EROFS, errno.ENOENT, errno.ENXIO, errno.ENODEV}
opened = 0


def say(name, refused, why):
    global opened
    if refused:
        print("%s: refused (%s)" % (name, why))
    else:
        opened += 1
        print("%s: OPEN (%s)" % (name, why))


def call(name, *args):
    """A system call: its result, or the errno's name as an OSError."""
    args = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = libc.syscall(NR[name], *args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def sys_try(name, sysname, *args, refused=REFUSED, after=None):
    if sysname not in NR:
        return
    try:
        r = call(sysname, *args)
        if after:
            after(r)
        say(name, False, "returned %d" % r)
    except OSError as e:
        say(name, e.errno in refused, errno.errorcode.get(e.errno, str(e.errno)))


def in_child(name, f, refused=REFUSED):
    """f in a forked child, which exits with 0 or the errno."""
    pid = os.fork()
    if pid == 0:
        try:
            f()
            os._exit(0)
        except OSError as e:
            os._exit(e.errno or 1)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        say(name, False, "it worked")
    else:
        say(name, code in refused, errno.errorcode.get(code, "exit %d" % code))


def open_try(name, path, flags=os.O_WRONLY, refused=FILES):
    """Opens path (for writing: nothing is written) and closes it."""
    if not path:
        say(name, True, "none on this machine")
        return
    try:
        os.close(os.open(path, flags))
        say(name, False, "opened " + path)
    except OSError as e:
        say(name, e.errno in refused, errno.errorcode.get(e.errno, str(e.errno)))


def first(*patterns):
    for p in patterns:
        for m in sorted(glob.glob(p)):
            return m
    return ""


scratch = os.environ.get("TMPDIR", "/tmp")
print("machine: " + platform.machine())

# The kernel's knobs: each runs a program as the machine's root, or acts
# on the machine.
open_try("core_pattern", "/proc/sys/kernel/core_pattern")
open_try("modprobe path", "/proc/sys/kernel/modprobe")
open_try("a sysctl", "/proc/sys/vm/swappiness")
open_try("hostname file", "/proc/sys/kernel/hostname")
open_try("uevent_helper", "/sys/kernel/uevent_helper")
open_try("sysrq-trigger", "/proc/sysrq-trigger")
open_try("binfmt_misc register", first("/proc/sys/fs/binfmt_misc/register"))
open_try("cgroup release_agent", first("/sys/fs/cgroup/*/release_agent", "/sys/fs/cgroup/release_agent"))
open_try("cgroup.procs", first("/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/*/cgroup.procs"))
open_try("/sys", first("/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/profiling", "/sys/power/state"))
open_try("/proc/kcore", "/proc/kcore", os.O_RDONLY)
open_try("/dev/mem", "/dev/mem", os.O_RDONLY)
open_try("/dev/kmsg", "/dev/kmsg")
open_try("a block device", first(*["/dev/" + os.path.basename(b) for b in glob.glob("/sys/block/*")]), os.O_RDONLY)
open_try("a terminal (TIOCSTI)", "/dev/tty", os.O_RDWR)
try:
    keys = open("/proc/keys").read()
    say("/proc/keys", keys == "", "%d bytes" % len(keys))
except OSError as e:
    say("/proc/keys", e.errno in FILES, errno.errorcode.get(e.errno, str(e.errno)))

# Mounts: /proc, /sys and cgroup v1 (whose release_agent ran as root),
# binfmt_misc; each in a child.
for fs in ["proc", "sysfs", "cgroup", "binfmt_misc", "tmpfs"]:
    target = os.path.join(scratch, "escape-" + fs)
    os.makedirs(target, exist_ok=True)
    in_child("mount " + fs, lambda fs=fs, target=target: call("mount", fs.encode(), target.encode(), fs.encode(), 0, b"memory" if fs == "cgroup" else None))
sys_try("fsopen", "fsopen", b"proc", 0, after=os.close)
sys_try("open_tree", "open_tree", -100, b"/", 1, after=os.close)  # AT_FDCWD, OPEN_TREE_CLONE
in_child("chroot", lambda: call("chroot", b"."))
in_child("pivot_root", lambda: call("pivot_root", b".", b"."))

# Namespaces: a new user namespace holds every capability inside.
in_child("new user namespace", lambda: call("unshare", 0x10000000))
in_child("new mount namespace", lambda: call("unshare", 0x00020000))
try:
    r = subprocess.run(["unshare", "-U", "-r", "true"], capture_output=True, text=True)
    say("unshare -U", r.returncode != 0, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1])
except FileNotFoundError:
    say("unshare -U", True, "no unshare command")
sys_try("setns", "setns", -1, 0, refused=REFUSED)

# Other processes: the only other one this program sees is bubblewrap's
# pid 1; one outside it is named, not seen.
# TEST_OUTSIDE_PID names one (its number outside, which in the program's
# PID namespace names nothing); else a number no process here has.
outside = int(os.environ.get("TEST_OUTSIDE_PID", "") or 300)
sys_try("ptrace a process outside", "ptrace", 0x4206, outside, 0, 0, refused=REFUSED | {errno.ESRCH})  # PTRACE_SEIZE: no stop
sys_try("ptrace pid 1", "ptrace", 0x4206, 1, 0, 0)
sys_try("process_vm_writev pid 1", "process_vm_writev", 1, None, 0, None, 0, 0)
open_try("/proc/1/mem", "/proc/1/mem", os.O_RDWR)

# Keyrings: uid 0's are the machine's root's.
sys_try("keyctl", "keyctl", 0, -4, 0)  # KEYCTL_GET_KEYRING_ID of the user keyring
sys_try("add_key", "add_key", b"user", b"dryfire-escape-probe", b"x", 1, -2)  # to the process keyring
sys_try("request_key", "request_key", b"user", b"dryfire-escape-none", None, 0)

# The kernel's own code: modules, kexec, BPF, perf, reboot (wrong magic).
sys_try("init_module", "init_module", None, 0, b"")
sys_try("finit_module", "finit_module", -1, b"", 0)
sys_try("delete_module", "delete_module", b"dryfire_escape_none", 0)
sys_try("kexec_load", "kexec_load", 0, 0, None, -1)  # no such flags
sys_try("kexec_file_load", "kexec_file_load", -1, -1, 0, None, 0)
sys_try("reboot", "reboot", 0, 0, 0, None)
sys_try("bpf", "bpf", 5, None, 0)  # BPF_PROG_LOAD
sys_try("perf_event_open", "perf_event_open", None, 0, -1, -1, 0)
sys_try("userfaultfd", "userfaultfd", 1, after=lambda fd: os.close(fd))  # UFFD_USER_MODE_ONLY
sys_try("io_uring_setup", "io_uring_setup", 1, None)
sys_try("open_by_handle_at", "open_by_handle_at", -100, None, 0)
sys_try("name_to_handle_at", "name_to_handle_at", -100, b"/", None, None, 0)
sys_try("swapon", "swapon", b"/dryfire-escape-none", 0)
sys_try("acct", "acct", b"/dryfire-escape-none")
sys_try("syslog", "syslog", 10, None, 0)  # SYSLOG_ACTION_SIZE_BUFFER
sys_try("iopl", "iopl", 3)
sys_try("ioperm", "ioperm", 0x80, 1, 1)
sys_try("personality", "personality", 0x0040000)  # ADDR_NO_RANDOMIZE
host = socket.gethostname().encode()
sys_try("sethostname", "sethostname", host, len(host))

# Devices and raw network.
for kind, mode, dev in [("block", stat.S_IFBLK, (7, 0)), ("char", stat.S_IFCHR, (1, 1))]:
    node = os.path.join(scratch, "escape-" + kind)
    try:
        os.mknod(node, mode | 0o600, os.makedev(*dev))
        os.remove(node)
        say("mknod " + kind, False, "made")
    except OSError as e:
        say("mknod " + kind, e.errno in REFUSED, errno.errorcode.get(e.errno, str(e.errno)))
for name, args in [("raw socket", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)), ("packet socket", (socket.AF_PACKET, socket.SOCK_RAW, 0))]:
    try:
        socket.socket(*args).close()
        say(name, False, "made")
    except OSError as e:
        say(name, e.errno in REFUSED, errno.errorcode.get(e.errno, str(e.errno)))

print("open: %d" % opened)
