package runner

// The network of agent.command programs (agent.network, dryfire run
// --network). isolated runs each case's program in a network namespace
// of its own (internal/netjail) where only the run's host answers, on the
// same 127.0.0.1 port its URLs name: the program's model and tool calls
// work as ever, every other connection is refused at once, and what it
// tried is reported and fails the case. report runs it in such a
// namespace too, but lets what it tries through (netjail passes each
// connection and name lookup on from the machine's network) and reports
// it without failing the case: a way to see what an agent reaches
// before closing the network. open is the machine's network. Under
// isolated and report the program runs under bubblewrap (netjail's
// confine_linux.go): no capabilities, its own processes, the machine's
// Unix sockets covered; sandboxed is isolated with the filesystem
// confined too (read-only but its workspace and a private /tmp), and its
// report says what was hidden.
// The default is isolated when CI is set (a CI run is meant to be
// offline, and a program that reaches past dryfire is how it would not
// be), open elsewhere; under CI where namespaces cannot be made, the
// program runs open and each case says so in a note: never silently.

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/report"
)

// networkOf is the network of a case's program and whether it is the
// default (not asked for by the suite or the run).
func networkOf(a *spec.Agent, opts Options, getenv func(string) string) (mode string, dflt bool) {
	switch {
	case opts.Network != "":
		return opts.Network, false
	case a.Network != "":
		return a.Network, false
	case getenv("CI") != "":
		return spec.NetworkIsolated, true
	}
	return spec.NetworkOpen, true
}

// openJail makes a case's namespace and serves the host in it. nil and a
// note: the default could not isolate (the program runs open); nil and
// an error: isolated was asked for and cannot be had.
// write are directories it may write besides its workspace, sandboxed.
// Its connections reach only sc's routes (toolserver.Bound).
func (h *host) openJail(mode string, dflt bool, dir string, write []string, sc *toolserver.Scope) (j *netjail.Jail, note string, err error) {
	if mode != spec.NetworkIsolated && mode != spec.NetworkReport && mode != spec.NetworkSandboxed {
		return nil, "", nil
	}
	if h.hs == nil {
		return nil, "", nil // another server serves the host (the SDKs' engine): its programs are the tests'
	}
	if note, err := osNetwork(mode, dflt, runtime.GOOS); note != "" || err != nil {
		return nil, note, err
	}
	if dflt {
		if err := netjail.Available(); err != nil {
			return nil, "network: not isolated, although CI is set (" + err.Error() + "); agent.network: open says that is intended", nil
		}
	}
	o := &netjail.Options{Read: []string{dir}, Write: write} // isolated
	switch mode {
	case spec.NetworkReport:
		o.Pass = true
	case spec.NetworkSandboxed:
		o.Sandbox = true
	}
	j, err = netjail.New(h.port, o)
	if err != nil {
		return nil, "", fmt.Errorf("agent.network is %s, but %w", mode, err)
	}
	go h.hs.Serve(toolserver.Bound(j.Listener(), sc))
	return j, "", nil
}

// osNetwork is what a jailed mode comes to on goos (a runtime.GOOS)
// before any namespace is tried: off Linux, the CI default a note (the
// program runs open) and a mode asked for an error; "", nil where a jail
// may be made.
func osNetwork(mode string, dflt bool, goos string) (note string, err error) {
	if mode != spec.NetworkIsolated && mode != spec.NetworkReport && mode != spec.NetworkSandboxed {
		return "", nil
	}
	unsupported := netjail.OSSupport(goos)
	switch {
	case unsupported == nil:
		return "", nil
	case dflt:
		return "network: not isolated, although CI is set (" + unsupported.Error() + "); agent.network: open says that is intended", nil
	}
	return "", fmt.Errorf("agent.network is %s, but %w", mode, unsupported)
}

// programDir is the directory a case's program is written in (runProgram
// runs it there when it has no workspace): a sandbox keeps it readable.
func programDir(j job, opts Options) string {
	if opts.CommandDir != "" {
		return opts.CommandDir
	}
	return filepath.Dir(j.suite.File)
}

// networkFindings puts what a program tried past dryfire into the case:
// its report's network, and a failure of a case that would pass. A
// program that tried nothing leaves the report as an open network would:
// the same report whether or not the run was isolated.
func networkFindings(c *report.Case, mode string, attempts []netjail.Attempt, confined []string) {
	if mode == spec.NetworkSandboxed {
		c.Notes = append(c.Notes, "sandboxed (agent.network): "+netjail.Confinement+"; the filesystem read-only but its workspace and a private /tmp; hidden: "+strings.Join(confined, ", "))
	}
	if len(attempts) == 0 {
		return
	}
	c.Network = &report.Network{Mode: mode, Attempts: make([]report.NetworkAttempt, len(attempts))}
	parts := make([]string, len(attempts))
	for i, a := range attempts {
		c.Network.Attempts[i], parts[i] = report.NetworkAttempt(a), a.String()
	}
	if mode == spec.NetworkReport {
		c.Notes = append(c.Notes, "the agent reached past dryfire (let through: agent.network is report): "+strings.Join(parts, ", "))
		return
	}
	msg := "the agent tried to reach the network past dryfire (refused: agent.network is " + mode + "): " + strings.Join(parts, ", ")
	if c.Status == report.Passed {
		c.Status, c.Reason = report.Failed, msg
		return
	}
	c.Notes = append(c.Notes, msg)
}
