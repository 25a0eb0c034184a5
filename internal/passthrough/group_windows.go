package passthrough

import (
	"os"
	"os/exec"
)

// requestsOn gives the helper the requests' pipe as its standard input:
// Windows passes no other descriptor (DRYFIRE_PASSTHROUGH_REQUESTS).
func requestsOn(cmd *exec.Cmd, r *os.File) {
	cmd.Stdin = r
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, envRequests+"=0")
}

// newGroup does nothing on Windows: there are no process groups to kill
// whole.
func newGroup(*exec.Cmd) {}

// killGroup kills the helper itself.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
