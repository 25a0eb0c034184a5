//go:build unix

package runner_test

import (
	"os/exec"
	"syscall"
)

// asNobody runs cmd as the user nobody (the caller is root).
func asNobody(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}
