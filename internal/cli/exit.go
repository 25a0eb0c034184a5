package cli

import "github.com/dryfire-dev/dryfire"

// The exit codes of every command, decided here and nowhere else.
const (
	exitOK      = 0   // run: every case passed (or was skipped); reproduce: every drill identical
	exitFailed  = 1   // run: a case failed, or erred through the suite or the agent; reproduce: a drill differs
	exitUsage   = 2   // a usage or suite error; nothing ran
	exitInfra   = 3   // run: the only problems were infrastructure errors; serve: could not serve
	exitStopped = 130 // interrupted

	exitCallError       = 1 // call: the tool answered an error result
	exitCallUnreachable = 3 // call: no dryfire server answered
)

// runExit is the exit code of a finished run: a failed case, or one that
// erred through the suite or the agent, fails the run; errors of the
// surroundings alone (a provider unreachable, a cassette missing) are
// exit 3.
func runExit(rep *dryfire.Report) int {
	infra := false
	for _, c := range rep.Cases {
		switch {
		case c.Status == dryfire.Failed, c.Status == dryfire.Errored && !c.Infra:
			return exitFailed
		case c.Status == dryfire.Errored:
			infra = true
		}
	}
	if infra {
		return exitInfra
	}
	return exitOK
}
