// Package reaper runs a program so that whatever it starts ends with it:
// on Linux, under a reaper of its own (internal/program uses it for a
// program run without a jail, agent.network: open). Its own package, with
// few imports, so that its init comes early when dryfire's executable is
// started again as a reaper.
package reaper

// A reaper is dryfire's own executable, started again, which
// sets PR_SET_CHILD_SUBREAPER, starts the program, and when the program
// has exited (or when dryfire asks, with SIGTERM, on a timeout or an
// interruption) kills every process left below it. A daemon that called
// setsid() and forked twice (issue 36, hole 8) leaves the program's
// process group, but its orphans are the reaper's, not init's. In a jail
// the PID namespace does this already. Why a reaper, not a cgroup or a
// PID namespace: docs/decisions.md, "Sandboxing agent programs".

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperEnv, set to reaperMark, makes dryfire's executable a reaper
// (init below) of the program its arguments name: path, then argv.
const (
	reaperEnv  = "DRYFIRE_REAPER"
	reaperMark = "dryfire-reaper-1"
)

// maxReapRounds bounds the rounds of killing a reaper does (a program
// forking as fast as it is killed).
const maxReapRounds = 1000

func init() {
	if os.Getenv(reaperEnv) == reaperMark && len(os.Args) > 2 {
		os.Exit(reap(os.Args[1], os.Args[2:]))
	}
}

// Wrap rewrites cmd to start its program under a reaper. The
// function it returns is called with cmd.Start's error and says whether
// the program itself started (after waiting for the reaper when it did
// not); nil: no reaper (cmd runs as it is).
func Wrap(cmd *exec.Cmd) func(startErr error) error {
	if cmd.Err != nil || len(cmd.ExtraFiles) > 0 {
		return nil
	}
	// The running executable itself, even when its file has been
	// replaced or removed since (a rebuild during the run).
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		return nil
	}
	r, w, err := os.Pipe() // the reaper's word on the start of the program
	if err != nil {
		return nil
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], reaperEnv+"="+reaperMark)
	cmd.Args = append([]string{"dryfire-reaper", cmd.Path}, cmd.Args...)
	cmd.Path = self
	cmd.ExtraFiles = []*os.File{w} // its fd 3
	// dryfire killed (SIGKILL, out of memory): the reaper is told as on
	// a timeout, and ends what the program started.
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	return func(startErr error) error {
		w.Close()
		defer r.Close()
		if startErr != nil {
			return startErr
		}
		msg, _ := io.ReadAll(io.LimitReader(r, 4096))
		if len(msg) > 0 {
			cmd.Wait()
			return errors.New(string(msg))
		}
		return nil
	}
}

// reap runs the program, then kills what it left, and exits as it did.
func reap(path string, argv []string) int {
	report := os.NewFile(3, "dryfire-reaper-report")
	syscall.CloseOnExec(3)
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, reaperEnv+"=") })
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := cmd.Start(); err != nil {
		report.WriteString(err.Error())
		return 127
	}
	report.Close()
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-term:
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
		<-done
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its group, as without a reaper
	killDescendants()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		// Killed by a signal: so is the reaper, for dryfire to say which.
		signal.Reset(ws.Signal())
		unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
		syscall.Kill(os.Getpid(), ws.Signal())
		time.Sleep(time.Second)
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// killDescendants kills the reaper's children until none is left: each
// process the program left behind is one, or the child of one, and
// becomes one when its parent dies.
func killDescendants() {
	self := os.Getpid()
	for range maxReapRounds {
		if _, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); err == syscall.ECHILD {
			return // none left
		}
		kids := children(self)
		for _, pid := range kids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, pid := range kids {
			syscall.Wait4(pid, nil, 0, nil)
		}
		if len(kids) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// children are the processes whose parent is pid, from /proc.
func children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold anything, ')' too.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}
