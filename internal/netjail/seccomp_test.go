//go:build linux

package netjail

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	netbpf "golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	if os.Getenv("NETJAIL_SECCOMP_PROBE") == "1" {
		seccompProbe()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runFilter runs the filter on one call, as the kernel would: the
// answer (SECCOMP_RET_*, with its errno). x/net/bpf's machine reads
// words big-endian, so seccomp_data's are written so.
func runFilter(t *testing.T, filter []byte, auditArch uint32, nr int, args ...uint64) uint32 {
	t.Helper()
	var raw []netbpf.RawInstruction
	for i := 0; i+8 <= len(filter); i += 8 {
		raw = append(raw, netbpf.RawInstruction{Op: binary.NativeEndian.Uint16(filter[i:]), Jt: filter[i+2], Jf: filter[i+3], K: binary.NativeEndian.Uint32(filter[i+4:])})
	}
	insts, ok := netbpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter does not disassemble")
	}
	vm, err := netbpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64) // struct seccomp_data: nr, arch, ip, args[6]
	binary.BigEndian.PutUint32(data[0:], uint32(nr))
	binary.BigEndian.PutUint32(data[4:], auditArch)
	for i, a := range args {
		lo, hi := 16+8*i, 16+8*i+4 // little-endian machines: the low word first
		if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
			lo, hi = hi, lo
		}
		binary.BigEndian.PutUint32(data[lo:], uint32(a))
		binary.BigEndian.PutUint32(data[hi:], uint32(a>>32))
	}
	n, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(n)
}

// The filter, run on each call it is about: every refused name gets
// EPERM, clone3 ENOSYS; clone and unshare by their namespace flags;
// personality by its value; a call of another architecture ends the
// program; what a program needs passes.
func TestSeccompFilter(t *testing.T) {
	filter, err := seccompFilter()
	if err != nil {
		t.Skip(err)
	}
	info, _ := arch.GetInfo("")
	id := uint32(info.ID)
	const (
		allow  = uint32(seccomp.ActionAllow)
		eperm  = uint32(seccomp.ActionErrno) | uint32(syscall.EPERM)
		enosys = uint32(seccomp.ActionErrno) | uint32(syscall.ENOSYS)
		kill   = uint32(seccomp.ActionKillProcess)
	)
	nr := func(name string) int {
		n, ok := info.SyscallNames[name]
		if !ok {
			t.Fatalf("no %s on %s", name, info.Name)
		}
		return n
	}
	n := 0
	for _, g := range refused {
		for _, name := range g.names {
			if num, ok := info.SyscallNames[name]; ok {
				n++
				if got := runFilter(t, filter, id, num); got != eperm {
					t.Errorf("%s (%s): %#x, want EPERM", name, g.why, got)
				}
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d refused calls exist on %s", n, info.Name)
	}
	for _, tt := range []struct {
		name string
		args []uint64
		want uint32
	}{
		{"read", nil, allow},
		{"openat", nil, allow},
		{"execve", nil, allow},
		{"clone3", nil, enosys},
		{"clone", []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID}, allow}, // a thread
		{"clone", []uint64{uint64(syscall.SIGCHLD)}, allow}, // fork
		{"clone", []uint64{unix.CLONE_NEWUSER | uint64(syscall.SIGCHLD)}, eperm},
		{"clone", []uint64{unix.CLONE_NEWNS}, eperm},
		{"clone", []uint64{unix.CLONE_NEWNET}, eperm},
		{"clone", []uint64{unix.CLONE_NEWCGROUP}, eperm},
		{"clone", []uint64{1<<32 | uint64(syscall.SIGCHLD)}, allow}, // high bits are no namespace
		{"unshare", []uint64{unix.CLONE_NEWUSER}, eperm},
		{"unshare", []uint64{unix.CLONE_NEWTIME}, eperm},
		{"unshare", []uint64{unix.CLONE_NEWPID}, eperm},
		{"unshare", []uint64{unix.CLONE_FILES}, allow},
		{"personality", []uint64{0xffffffff}, allow},
		{"personality", []uint64{0}, allow},
		{"personality", []uint64{0x0040000}, eperm}, // ADDR_NO_RANDOMIZE
		{"personality", []uint64{0x0400000}, eperm}, // READ_IMPLIES_EXEC
	} {
		if got := runFilter(t, filter, id, nr(tt.name), tt.args...); got != tt.want {
			t.Errorf("%s(%#x): %#x, want %#x", tt.name, tt.args, got, tt.want)
		}
	}
	// Another architecture's calls: an amd64 program's int 0x80 (i386),
	// an arm64 one's AArch32.
	for _, other := range []*arch.Info{arch.I386, arch.ARM, arch.X86_64, arch.AARCH64} {
		if other.ID == info.ID {
			continue
		}
		if got := runFilter(t, filter, uint32(other.ID), 0); got != kill {
			t.Errorf("a call of %s: %#x, want the program killed", other.Name, got)
		}
	}
	if runtime.GOARCH == "amd64" { // x32's numbers
		if got := runFilter(t, filter, id, 0x40000000|nr("read")); got != enosys {
			t.Errorf("an x32 call: %#x, want ENOSYS", got)
		}
	}
}

// An architecture without a table is a clear error, not a program
// running unfiltered.
func TestSeccompFilterOtherArch(t *testing.T) {
	for _, goarch := range []string{"riscv64", "386", "arm"} {
		_, err := buildFilter(goarch)
		if err == nil || !strings.Contains(err.Error(), "no system call table for "+goarch+" (it has amd64's and arm64's)") {
			t.Errorf("%s: %v", goarch, err)
		}
	}
}

// seccompProbe makes calls the filter refuses, with arguments the kernel
// itself would answer otherwise (EFAULT, EBADF, ESRCH, success: never
// EPERM), and prints each answer: a program confined by New's jails.
func seccompProbe() {
	call := func(name string, nr uintptr, args ...uintptr) {
		a := make([]uintptr, 6)
		copy(a, args)
		r, _, e := syscall.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if e != 0 {
			fmt.Printf("%s: %s\n", name, unix.ErrnoName(e))
			return
		}
		fmt.Printf("%s: ok\n", name)
		if name == "userfaultfd" {
			syscall.Close(int(r))
		}
	}
	call("unshare user", unix.SYS_UNSHARE, unix.CLONE_NEWUSER)
	call("setns", unix.SYS_SETNS, ^uintptr(0), 0)
	call("clone3", unix.SYS_CLONE3, 0, 0)
	call("keyctl", unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, ^uintptr(3), 0) // KEY_SPEC_USER_KEYRING
	call("add_key", unix.SYS_ADD_KEY, 0, 0, 0, 0, 0)
	call("perf_event_open", unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0)
	call("userfaultfd", unix.SYS_USERFAULTFD, 1|unix.O_CLOEXEC) // UFFD_USER_MODE_ONLY: needs no capability
	call("io_uring_setup", unix.SYS_IO_URING_SETUP, 0, 0)
	call("ptrace", unix.SYS_PTRACE, 0xffff, 1<<22)
	call("process_vm_readv", unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid()), 0, 0, 0, 0, 0)
	call("kcmp", unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(os.Getpid()), 0, 0, 0)
	call("name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT, ^uintptr(99), uintptr(unsafe.Pointer(&[]byte("/\x00")[0])), 0, 0, 0)
	call("personality", unix.SYS_PERSONALITY, 0x0040000)
	call("personality query", unix.SYS_PERSONALITY, 0xffffffff)
	// A child in a new user namespace, through Go's clone (clone3 first).
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		fmt.Printf("clone user: %v\n", err)
	} else {
		fmt.Println("clone user: ok")
	}
	if err := exec.Command("/bin/true").Run(); err != nil {
		fmt.Printf("fork: %v\n", err)
	} else {
		fmt.Println("fork: ok")
	}
}

// The filter holds in a jail, isolated and sandboxed: each call is
// refused by it (EPERM, clone3 ENOSYS), where the kernel would have
// answered otherwise; a fork and the personality query still work.
func TestSeccompInJail(t *testing.T) {
	jailOrSkip(t)
	want := `unshare user: EPERM
setns: EPERM
clone3: ENOSYS
keyctl: EPERM
add_key: EPERM
perf_event_open: EPERM
userfaultfd: EPERM
io_uring_setup: EPERM
ptrace: EPERM
process_vm_readv: EPERM
kcmp: EPERM
name_to_handle_at: EPERM
personality: EPERM
personality query: ok
clone user: fork/exec /bin/true: operation not permitted
fork: ok
`
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sandbox := range []bool{false, true} {
		j, err := New(0, &Options{Sandbox: sandbox})
		if err != nil {
			t.Fatal(err)
		}
		var out, errb strings.Builder
		cmd := exec.Command(exe)
		// The test binary's directory, shown in the sandbox: the package's
		// own is hidden when the checkout is under /tmp (fresh-ci's is).
		cmd.Dir = filepath.Dir(exe)
		cmd.Env = append(os.Environ(), "NETJAIL_SECCOMP_PROBE=1")
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := j.Start(cmd); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		j.Close()
		if err != nil || out.String() != want {
			t.Errorf("sandbox %v: %v\n%s\nwant:\n%s\nstderr: %s", sandbox, err, out.String(), want, errb.String())
		}
	}
}
