# An agent that uses dryfire's model endpoint, its MCP and HTTP tools, and
# then tries every way out of its confinement it knows, printing one line
# per try: "TRY: could" or "TRY: refused (WHY)". What internal/runner's
# TestSandbox and TestIsolatedConfines run (issue 30).
import ctypes, glob, json, os, signal, socket, subprocess, sys, urllib.request


def post(url, body, accept="application/json"):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Accept": accept, "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode()


question = sys.stdin.read()
answer = json.loads(post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "gpt-test", "messages": [{"role": "user", "content": question}]}))
print("model:", answer["choices"][0]["message"]["content"])
print("mcp tool:", "gold" in post(os.environ["DRYFIRE_MCP_URL"], {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup_order", "arguments": {"order_id": "A-991"}}}, "application/json, text/event-stream"))
print("http tool:", "gold" in post(os.environ["DRYFIRE_TOOLS_URL"] + "/lookup_order", {"order_id": "A-991"}))

other = int(os.environ["TEST_OTHER_PORT"])
libc = ctypes.CDLL(None, use_errno=True)


def attempt(name, f):
    try:
        f()
        print(name + ": could")
    except Exception as e:
        print("%s: refused (%s)" % (name, type(e).__name__))


def reach():
    socket.create_connection(("127.0.0.1", other), timeout=5).close()


def setns_into(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            raise PermissionError(os.strerror(ctypes.get_errno()))
    finally:
        os.close(fd)


def setns_any():
    # Every network namespace this program can name: its parent's, and
    # every process's it can see; then 127.0.0.1 from there.
    paths = ["/proc/%d/ns/net" % os.getppid()] + sorted(glob.glob("/proc/[0-9]*/ns/net"))
    mine = os.stat("/proc/self/ns/net").st_ino
    for p in paths:
        try:
            if os.stat(p).st_ino == mine:
                continue
            setns_into(p)
            reach()
            return
        except OSError:
            continue
    raise PermissionError("no namespace to enter")


def nsenter():
    for target in [str(os.getppid()), "1"]:
        r = subprocess.run(["nsenter", "-t", target, "-n", sys.executable, "-c",
                            "import socket; socket.create_connection(('127.0.0.1', %d), timeout=5).close()" % other],
                           capture_output=True)
        if r.returncode == 0:
            return
    raise PermissionError("nsenter failed")


def unix(path):
    def f():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(path)
        s.close()
    return f


def read_home():
    with open(os.environ["TEST_SECRET"]) as f:
        f.read()


def write(path):
    def f():
        with open(path, "w") as w:
            w.write("x")
    return f


def see_outside():
    os.kill(int(os.environ["TEST_OUTSIDE_PID"]), 0)


def signal_outside():
    os.kill(int(os.environ["TEST_OUTSIDE_PID"]), signal.SIGCONT)


def capabilities():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:") and int(line.split()[1], 16) == 0:
            raise PermissionError("none")


def open_write(path):
    # Opened for writing and closed at once: nothing is ever written (a
    # write to core_pattern or sysrq-trigger would act on the machine).
    def f():
        if not path:
            raise FileNotFoundError("none on this machine")
        os.close(os.open(path, os.O_WRONLY))
    return f


def open_read(path):
    def f():
        if not path:
            raise FileNotFoundError("none on this machine")
        os.close(os.open(path, os.O_RDONLY))
    return f


def same_namespace(kind, env):
    def f():
        if os.stat("/proc/self/ns/" + kind).st_ino != int(os.environ[env]):
            raise PermissionError("its own")
    return f


attempt("reach 127.0.0.1", reach)
attempt("setns", setns_any)
attempt("nsenter", nsenter)
attempt("unix socket in the project", unix(os.environ["TEST_SOCKET_PROJECT"]))
attempt("unix socket elsewhere", unix(os.environ["TEST_SOCKET_ELSEWHERE"]))
attempt("unix socket by a hard link", unix(os.environ["TEST_SOCKET_HARDLINK"] or "/nonexistent"))
attempt("read home", read_home)
attempt("write project", write(os.path.join(os.environ["TEST_PROJECT"], "written-by-agent")))
attempt("write /etc", write("/etc/dryfire-sandbox-probe"))
attempt("write tmp", write(os.path.join(os.environ.get("TMPDIR", "/tmp"), "scratch")))
attempt("write workspace", write(os.path.join(os.environ.get("DRYFIRE_WORKSPACE", "."), "out.txt")))
attempt("see a process outside", see_outside)
attempt("signal a process outside", signal_outside)
attempt("capabilities", capabilities)
# The kernel's knobs (issue 36, hole 1): each would act on the machine.
attempt("write core_pattern", open_write("/proc/sys/kernel/core_pattern"))
attempt("write a sysctl", open_write("/proc/sys/vm/swappiness"))
attempt("write hostname", open_write("/proc/sys/kernel/hostname"))
attempt("share the UTS namespace", same_namespace("uts", "TEST_HOST_UTS"))
attempt("share the IPC namespace", same_namespace("ipc", "TEST_HOST_IPC"))
attempt("write sysrq-trigger", open_write("/proc/sysrq-trigger"))
attempt("write /sys", open_write(os.environ.get("TEST_SYS_FILE")))
attempt("write a cgroup", open_write(os.environ.get("TEST_CGROUP_FILE")))
attempt("open a block device", open_read(os.environ.get("TEST_BLOCK_DEVICE")))
attempt("write /dev/kmsg", open_write("/dev/kmsg"))
print("processes seen:", len(glob.glob("/proc/[0-9]*")))
