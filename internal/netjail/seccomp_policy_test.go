//go:build linux

package netjail

// The seccomp policy (issue 36) and its building by
// github.com/elastic/go-seccomp-bpf: what seccomp_amd64.bpf and
// seccomp_arm64.bpf hold, embedded by seccomp_linux.go. Why a list of
// refusals over a default of allow: seccomp_linux.go.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	netbpf "golang.org/x/net/bpf"
)

var updateSeccomp = flag.Bool("update-seccomp", false, "write seccomp_GOARCH.bpf from the policy")

// refused are the system calls a confined program gets EPERM for (as
// Docker's default profile answers), by what they would reach. A name
// the machine's architecture lacks (iopl on arm64) is left out.
var refused = []struct {
	why   string
	names []string
}{
	// Code into the kernel, or another kernel.
	{"kernel modules", []string{"init_module", "finit_module", "delete_module", "create_module", "query_module", "get_kernel_syms"}},
	{"kexec and reboot", []string{"kexec_load", "kexec_file_load", "reboot"}},
	// Reachable without a capability where the machine allows it
	// (unprivileged_bpf_disabled, perf_event_paranoid): kernel attack
	// surface no agent needs.
	{"bpf, perf", []string{"bpf", "perf_event_open"}},
	// uid 0's keyrings are the machine's root's.
	{"keyrings", []string{"add_key", "keyctl", "request_key"}},
	// The usual tools of kernel exploits; io_uring is refused by
	// Docker's profile since 2023 (libuv falls back to threads).
	{"userfaultfd, io_uring", []string{"userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register"}},
	// Its mounts are bubblewrap's, made before the program starts.
	{"mounts", []string{"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "open_tree_attr", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"}},
	// Another namespace (clone and unshare below).
	{"setns", []string{"setns"}},
	// Another process's memory: bubblewrap's pid 1, the one other
	// process in the PID namespace, is the case's too, but nothing needs
	// them (strace and gdb do not run here).
	{"ptrace", []string{"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"}},
	// open_by_handle_at read the machine's files from Docker ("shocker").
	{"file handles", []string{"open_by_handle_at", "name_to_handle_at"}},
	// The machine's own state.
	{"swap, accounting, quotas", []string{"swapon", "swapoff", "acct", "quotactl", "quotactl_fd"}},
	{"clock, host name", []string{"settimeofday", "clock_settime", "sethostname", "setdomainname"}},
	{"I/O ports, kernel log, terminals", []string{"iopl", "ioperm", "syslog", "vhangup"}},
	{"fanotify", []string{"fanotify_init"}},
	// Obsolete calls with a history of bugs.
	{"obsolete", []string{"uselib", "ustat", "sysfs", "_sysctl", "vm86", "vm86old", "lookup_dcookie", "nfsservctl"}},
}

// Namespace flags of clone and unshare: CLONE_NEWNS, NEWCGROUP, NEWUTS,
// NEWIPC, NEWUSER, NEWPID, NEWNET, and (unshare only) NEWTIME.
const (
	cloneNamespaces   = 0x7E020000
	unshareNamespaces = cloneNamespaces | 0x80
)

// personalities are those a program may set (Docker's list: Linux's
// default, UNAME26, PER_LINUX32 with and without it, and the query);
// others turn off address randomisation or make data executable.
var personalities = []uint64{0, 0x8, 0x20000, 0x20008, 0xffffffff}

// refusedIf are the calls refused by their arguments, and clone3,
// refused with ENOSYS (its flags are behind a pointer): glibc then uses
// clone, whose flags the filter reads.
func refusedIf() []seccomp.SyscallGroup {
	notAllowed := seccomp.ArgumentConditions{}
	for _, p := range personalities {
		notAllowed = append(notAllowed, seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: p})
	}
	return []seccomp.SyscallGroup{{
		Action: seccomp.ActionErrno,
		NamesWithCondtions: []seccomp.NameWithConditions{
			// A new namespace: a user namespace gives back every capability
			// inside it, and kernel attack surface with them.
			{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: cloneNamespaces}}},
			{Name: "unshare", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unshareNamespaces}}},
			{Name: "personality", Conditions: notAllowed},
		},
	}, {
		Action: seccomp.ActionErrno | seccomp.Action(syscall.ENOSYS),
		Names:  []string{"clone3"},
	}}
}

func buildFilter(goarch string) ([]byte, error) {
	// The library builds for the running architecture only, and has
	// tables for 386 and arm too; but a 32-bit dryfire on a 64-bit
	// kernel would filter (kill) every 64-bit program.
	info, err := arch.GetInfo(goarch)
	if err != nil || goarch != runtime.GOARCH || goarch != "amd64" && goarch != "arm64" {
		return nil, fmt.Errorf("the sandbox's seccomp filter has no system call table for %s (it has amd64's and arm64's): run dryfire for one of those, or use network: open", goarch)
	}
	policy := seccomp.Policy{DefaultAction: seccomp.ActionAllow}
	for _, g := range refused {
		var names []string
		for _, n := range g.names {
			if _, ok := info.SyscallNames[n]; ok && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		policy.Syscalls = append(policy.Syscalls, seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: names})
	}
	policy.Syscalls = append(policy.Syscalls, refusedIf()...)
	prog, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("building the sandbox's seccomp filter: %w", err)
	}
	// The library lets a call of another architecture through (its
	// default action: here, allow): an amd64 program's int 0x80 is an
	// i386 call, with i386 numbers. Those end the program first.
	guard := []netbpf.Instruction{
		netbpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		netbpf.JumpIf{Cond: netbpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		netbpf.RetConstant{Val: uint32(seccomp.ActionKillProcess)},
	}
	raw, err := netbpf.Assemble(append(guard, prog...))
	if err != nil {
		return nil, fmt.Errorf("building the sandbox's seccomp filter: %w", err)
	}
	if len(raw) > 4096 { // BPF_MAXINSNS
		return nil, errors.New("the sandbox's seccomp filter is longer than the kernel takes")
	}
	out := make([]byte, 0, 8*len(raw))
	for _, in := range raw { // struct sock_filter: u16 code, u8 jt, u8 jf, u32 k
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
}

// The embedded filter is the policy's, built again by the library; on
// amd64, arm64's is checked by this test built for arm64 and run under
// qemu-aarch64 where the machine has it (always under CI).
func TestSeccompFilterEmbedded(t *testing.T) {
	built, err := buildFilter(runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	name := "seccomp_" + runtime.GOARCH + ".bpf"
	if *updateSeccomp {
		if err := os.WriteFile(name, built, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	embedded, err := seccompFilter()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, embedded) {
		t.Fatalf("%s is not the policy's filter (%d bytes, built %d): go test ./internal/netjail -run TestSeccompFilterEmbedded -update-seccomp", name, len(embedded), len(built))
	}
	if runtime.GOARCH != "amd64" || testing.Short() {
		return
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Log("no qemu-aarch64: arm64's filter not checked")
		}
		return
	}
	bin := filepath.Join(t.TempDir(), "netjail.test")
	c := exec.Command("go", "test", "-c", "-o", bin, ".")
	c.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("building the test for arm64: %v\n%s", err, out)
	}
	args := []string{bin, "-test.run", "^TestSeccompFilterEmbedded$", "-test.short"}
	if *updateSeccomp {
		args = append(args, "-update-seccomp")
	}
	run := exec.Command(qemu, args...)
	run.Dir = "."
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("arm64's filter, under qemu-aarch64: %v\n%s", err, out)
	}
}
