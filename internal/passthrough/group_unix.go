//go:build unix

package passthrough

import (
	"os/exec"
	"syscall"
)

// newGroup makes the helper the leader of a process group of its own, so
// that killGroup reaches whatever it starts.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the helper's process group.
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
