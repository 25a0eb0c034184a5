package program

import "os/exec"

// newGroup does nothing on Windows: there are no process groups to kill
// whole (what the program starts outlives a timeout there).
func newGroup(*exec.Cmd) {}

// killGroup kills the program itself.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
