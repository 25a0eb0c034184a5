//go:build unix

package program

import (
	"os/exec"
	"syscall"
)

// newGroup makes the program the leader of a process group of its own, so
// that killGroup reaches whatever it starts.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// joinGroup does nothing: the group was made at the start (newGroup).
func joinGroup(*exec.Cmd) {}

// killGroup kills the program's process group.
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
