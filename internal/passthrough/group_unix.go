//go:build unix

package passthrough

import (
	"os"
	"os/exec"
	"syscall"
)

// newGroup makes the helper the leader of a process group of its own, so
// that killGroup reaches whatever it starts.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// requestsOn gives the helper the requests' pipe as its fd 3
// (DRYFIRE_PASSTHROUGH_REQUESTS): its fd 0 stays /dev/null.
func requestsOn(cmd *exec.Cmd, r *os.File) {
	cmd.ExtraFiles = []*os.File{r}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, envRequests+"=3")
}

// killGroup kills the helper's process group.
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
