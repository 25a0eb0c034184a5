//go:build linux

package netjail

// Confinement of the programs a jail starts: each runs under bubblewrap
// (bwrap), started on the jail's thread so that it is in the jail's
// network namespace, with no capabilities and no_new_privs (so it cannot
// setns() or nsenter back into the machine's network, nor gain them
// from a setuid file), in a PID namespace of its own with its own /proc
// (it sees and signals only its own processes; no /proc/PID/ns of
// another), its own UTS, IPC and cgroup namespaces, and on a new session
// (no controlling terminal). The kernel's knobs are out of its reach
// under every level (kernelArgs): a minimal /dev, /sys and /proc/sys
// read-only, /proc's tales of the machine masked. Every Unix
// socket bound on the machine's network (the list of /proc/net/unix) is
// covered by /dev/null: a Docker socket is no way out. /tmp is private to
// the case (what its program is given there — its workspace, script,
// project — still shared).
//
// Sandboxed (Options.Sandbox) adds the filesystem: the machine's, read
// only, with /home, /root, /run, /tmp, /var/tmp and the user's home
// hidden behind empty private directories, /dev minimal; writable only
// the case's workspace and the private /tmp (TMPDIR); readable again the
// project's directory and the toolchains the program's PATH names in
// the hidden places (~/.pyenv for ~/.pyenv/shims), and the directories
// of the program's own files (its script, the MCP bridge). Docs:
// docs/agents.md, "Sandbox"; the choice of bubblewrap: docs/decisions.md.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// hidden are the directories a sandbox replaces with empty ones.
var hidden = []string{"/home", "/root", "/run", "/tmp", "/var/tmp"}

// bwrap finds bubblewrap and checks, once, that it can confine here.
var bwrap = sync.OnceValues(func() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", errors.New("it needs bubblewrap (bwrap) to keep the agent from leaving it (with no capabilities, in a PID namespace of its own), and bwrap is not on PATH: install it (Debian and Ubuntu: apt-get install bubblewrap)")
	}
	filter, err := filterFile()
	if err != nil {
		return "", err
	}
	defer filter.Close()
	probe := exec.Command(path, "--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--seccomp", "3", "--", "/bin/sh", "-c", "exit 0")
	probe.ExtraFiles = []*os.File{filter}
	if out, err := probe.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bubblewrap (%s) cannot confine the agent here (%v: %s): it needs root, or unprivileged user namespaces", path, err, strings.TrimSpace(string(out)))
	}
	return path, nil
})

// Confined says what the jail's last program was kept from, beyond the
// network: for a case's report.
func (j *Jail) Confined() []string {
	j.confine.mu.Lock()
	defer j.confine.mu.Unlock()
	return slices.Clone(j.confine.hid)
}

// confinement is what a jail's programs are kept from, for the report.
type confinement struct {
	sandbox bool
	read    []string // Options.Read
	write   []string // Options.Write
	mu      sync.Mutex
	hid     []string // what the last start hid, for Confined
}

// wrap rewrites cmd to run under bwrap; its program, arguments,
// directory and environment stay what they were. The file it returns
// (the seccomp filter's pipe) is to close once cmd has started.
func (c *confinement) wrap(cmd *exec.Cmd) (*os.File, error) {
	if cmd.Err != nil {
		return nil, nil // cmd.Start says why the program cannot start
	}
	bw, err := bwrap()
	if err != nil {
		return nil, err
	}
	dir := cmd.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	dir, _ = filepath.Abs(dir)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	args := []string{bw}
	var hid []string
	var ro, rw, hide []string // for binds
	if c.sandbox {
		args = append(args, "--ro-bind", "/", "/")
		args = append(args, kernelArgs()...)
		hide = slices.Clone(hidden)
		if home, err := os.UserHomeDir(); err == nil && !under(home, hide) && home != "/" {
			hide = append(hide, home)
		}
		hid = slices.DeleteFunc(slices.Clone(hide), notDir)
		for _, h := range hid {
			args = append(args, "--tmpfs", h)
		}
		ro = slices.Concat(c.read, toolchains(cmd, hide), programFiles(cmd, dir))
		if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && under(r, hide) {
			ro = append(ro, r)
		}
		if ws := envOf(cmd.Env, "DRYFIRE_WORKSPACE"); ws != "" {
			rw = append(rw, ws)
		}
		rw = append(rw, c.write...)
	} else {
		// The machine's files, but a private /tmp: in a PID namespace of
		// its own every program is pid 2, and tools that name files in
		// /tmp by their pid (tsx's IPC pipe) would collide across cases.
		// What the program is given under /tmp stays shared, writable.
		args = append(args, "--bind", "/", "/", "--ro-bind", "/sys", "/sys")
		// The system's own directories read-only: run as root, a program
		// could otherwise leave code that root runs later, outside
		// (/etc/ld.so.preload, a cron file, a library, a kernel module).
		sys := systemDirs()
		for _, d := range sys {
			args = append(args, "--ro-bind", d, d)
		}
		args = append(args, kernelArgs()...)
		args = append(args, "--tmpfs", "/tmp")
		hid = []string{"/tmp"}
		hide = hid
		for _, p := range slices.Concat(c.read, c.write, programFiles(cmd, dir), []string{envOf(cmd.Env, "DRYFIRE_WORKSPACE"), envOf(cmd.Env, "HOME"), dir}) {
			// What the case is given inside a system directory (a project
			// under /opt or /srv) stays writable.
			if p != "" && under(filepath.Clean(p), sys) && !slices.Contains(rw, p) {
				rw = append(rw, filepath.Clean(p))
				continue
			}
			// The whole directory of /tmp it is in: a project's siblings
			// (../agent/node_modules) come with it.
			if rest, ok := strings.CutPrefix(filepath.Clean(p), "/tmp/"); ok {
				top, _, _ := strings.Cut(rest, "/")
				if !slices.Contains(rw, "/tmp/"+top) {
					rw = append(rw, "/tmp/"+top)
				}
			}
		}
	}
	more, shown := binds(ro, rw, hide) // shown: directories bound again inside hidden ones
	args = append(args, more...)
	cmd.Env = append(cmd.Env, "TMPDIR=/tmp")
	sockets, err := machineSockets()
	if err != nil {
		return nil, err
	}
	n := 0
	for _, s := range sockets {
		if under(s, hid) && !under(s, shown) {
			continue // hidden already
		}
		args = append(args, "--ro-bind", "/dev/null", s)
		n++
	}
	if !c.sandbox {
		hid = nil // the report names a sandbox's only
	} else if n > 0 {
		hid = append(hid, fmt.Sprintf("%d Unix socket(s) of the machine", n))
	}
	filter, err := filterFile()
	if err != nil {
		return nil, err
	}
	args = append(args, "--seccomp", strconv.Itoa(3+len(cmd.ExtraFiles)))
	cmd.ExtraFiles = append(cmd.ExtraFiles, filter)
	args = append(args, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--chdir", dir, "--")
	args = append(args, cmd.Path)
	args = append(args, cmd.Args[1:]...)
	cmd.Path, cmd.Args = bw, args
	c.mu.Lock()
	c.hid = hid
	c.mu.Unlock()
	return filter, nil
}

// What of the kernel's own files a confined program keeps (issue 36,
// hole 1): uid 0 without capabilities still owns the sysctl files and
// /sys, and core_pattern = "|program" runs a program as the machine's
// root. As Docker's default (moby's oci/defaults.go, runc's readonlyPaths
// and maskedPaths) does: these are read-only,
var readOnlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}

// and these are covered (a file by /dev/null, a directory by an empty
// read-only tmpfs): they tell of the machine's hardware and kernel.
var maskedPaths = []string{
	"/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
	"/proc/sched_debug", "/proc/scsi", "/proc/timer_list", "/proc/timer_stats",
	"/sys/devices/virtual/powercap", "/sys/firmware",
}

// kernelArgs are bwrap's mounts of the kernel's files, for every level:
// a minimal /dev (null, zero, full, random, urandom, tty, a private pts
// and shm: no disk, /dev/mem or /dev/kmsg), the program's own /proc with
// readOnlyPaths and maskedPaths; /sys is the caller's (read-only).
// /proc's paths exist alike in the machine's /proc: one kernel.
func kernelArgs() []string {
	args := []string{"--dev", "/dev", "--proc", "/proc"}
	for _, p := range readOnlyPaths {
		if _, err := os.Lstat(p); err == nil {
			// The machine's /proc/sys is the program's too: what it shows
			// follows the reader's namespaces.
			args = append(args, "--ro-bind", p, p)
		}
	}
	// bubblewrap's pid 1 (the reaper) takes the seccomp filter a moment
	// after the program may start: its memory is no way around it.
	args = append(args, "--ro-bind", "/dev/null", "/proc/1/mem", "--ro-bind", "/dev/null", "/proc/1/task/1/mem")
	for _, p := range maskedPaths {
		st, err := os.Lstat(p)
		switch {
		case err != nil:
		case st.IsDir():
			args = append(args, "--tmpfs", p, "--remount-ro", p)
		default:
			args = append(args, "--ro-bind", "/dev/null", p)
		}
	}
	return args
}

// systemRO are the directories of the system that a program under
// isolated or report gets read-only (sandboxed has the whole machine so):
// what root runs or loads later, and where it keeps it. /var/tmp and the
// home directories stay writable, as the user's.
var systemRO = []string{"/bin", "/boot", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sbin", "/srv", "/usr", "/var/backups", "/var/cache", "/var/lib", "/var/local", "/var/log", "/var/mail", "/var/opt", "/var/spool"}

// systemDirs are those of systemRO that are directories here, not links
// (on a merged /usr, /bin is a link into /usr, read-only already).
func systemDirs() []string { return slices.DeleteFunc(slices.Clone(systemRO), notDir) }

// notDir says whether p is no directory here (a link to one is not one).
func notDir(p string) bool {
	st, err := os.Lstat(p)
	return err != nil || !st.IsDir()
}

// programFiles are the directories of the program's own files (a file
// itself, when its directory is one of the hidden): each
// argument that is an absolute path to a file (its script, made absolute
// by program.AbsArgs), and the MCP bridge it is told to start
// (DRYFIRE_MCP_ARGV's first word: dryfire itself).
func programFiles(cmd *exec.Cmd, dir string) []string {
	var out []string
	home, _ := os.UserHomeDir()
	// A file right in a hidden directory (dryfire as /tmp/dryfire) is
	// shown alone: its directory would show every other case's files.
	dirOf := func(p string) string {
		if d := filepath.Dir(p); d != "/" && !slices.Contains(hidden, d) && d != home {
			return d
		}
		return p
	}
	file := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return
		}
		out = append(out, dirOf(p))
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, dirOf(real))
		}
		// A program of a package (node_modules/.bin/tsx) needs the rest
		// of its node_modules.
		if i := strings.LastIndex(p, "/node_modules/"); i >= 0 {
			out = append(out, p[:i+len("/node_modules")])
		}
	}
	// The program itself, relative to its directory when it is a path.
	if prog := cmd.Path; strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(dir, prog)
		}
		file(prog)
	}
	for _, a := range cmd.Args[1:] {
		file(a)
	}
	var argv []string
	if json.Unmarshal([]byte(envOf(cmd.Env, "DRYFIRE_MCP_ARGV")), &argv) == nil && len(argv) > 0 {
		file(argv[0])
	}
	file(envOf(cmd.Env, "GOOGLE_APPLICATION_CREDENTIALS")) // the case's own (runner's vertexEnv)
	return append(out, linkedEntries(dir)...)
}

// maxLinkedEntries bounds the entries of a program's directory looked at
// for links.
const maxLinkedEntries = 1000

// linkedEntries are what the entries of dir that are symbolic links point
// to (a node_modules or .venv linked in from another checkout, perhaps
// under /tmp): they come with the program's directory.
func linkedEntries(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents[:min(len(ents), maxLinkedEntries)] {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name())); err == nil {
			out = append(out, real)
		}
	}
	return out
}

// binds are bwrap's mounts for the directories to show again, read-only
// or writable, parents before what they hold: only those in a hidden
// place need one (the rest of the machine is there, read-only).
func binds(ro, rw, hide []string) (args, bound []string) {
	type bind struct{ path, flag string }
	var all []bind
	for _, p := range ro {
		if p, err := filepath.Abs(p); err == nil && under(p, hide) {
			all = append(all, bind{p, "--ro-bind"})
		}
	}
	for _, p := range rw {
		if p, err := filepath.Abs(p); err == nil {
			all = append(all, bind{p, "--bind"})
		}
	}
	slices.SortStableFunc(all, func(a, b bind) int { return strings.Count(a.path, "/") - strings.Count(b.path, "/") })
	for _, b := range all {
		if _, err := os.Stat(b.path); err != nil {
			continue
		}
		args = append(args, b.flag, b.path, b.path)
		bound = append(bound, b.path)
	}
	return args, bound
}

// toolchains are the directories of the program's toolchains in hidden
// places: for each PATH entry, and the program itself, there, the
// directory its bin (or shims) is in.
func toolchains(cmd *exec.Cmd, hide []string) []string {
	var out []string
	add := func(dir string) {
		if !under(dir, hide) {
			return
		}
		if b := filepath.Base(dir); b == "bin" || b == "shims" {
			dir = filepath.Dir(dir)
		}
		if !slices.Contains(hide, dir) {
			out = append(out, dir)
		}
	}
	for _, d := range filepath.SplitList(envOf(cmd.Env, "PATH")) {
		if filepath.IsAbs(d) {
			add(filepath.Clean(d))
		}
	}
	if filepath.IsAbs(cmd.Path) {
		add(filepath.Dir(cmd.Path))
		if real, err := filepath.EvalSymlinks(cmd.Path); err == nil {
			add(filepath.Dir(real))
		}
	}
	return out
}

func under(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })
}

func envOf(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
