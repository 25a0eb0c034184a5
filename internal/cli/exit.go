package cli

import (
	"fmt"
	"strings"

	"github.com/dryfire-dev/dryfire/report"
)

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

// exitDocs says what each exit code means, command by command; the
// reference page docs/reference/exit-codes.md is generated from it.
var exitDocs = []struct {
	code     int
	commands string
	meaning  string
}{
	{exitOK, "every command", "Success. `run`, `merge`, `recheck`: every case passed (skipped cases allowed). `validate`: no errors (warnings allowed). `reproduce`: every drill is identical. `call`: the tool answered a result."},
	{exitOK, "`sweep`", "The sweep ran, whatever failures the agent survived: the table is a report, not a gate (unless `--fail-on` says otherwise)."},
	{exitOK, "`inject`", "The injection drill ran, whatever succeeded (unless `--fail-on` says otherwise)."},
	{exitOK, "`compare`, `run --baseline`", "No change of a kind `--fail-on` names (with `--baseline`, even when cases fail as they failed in BASE)."},
	{exitFailed, "`run`, `merge`, `recheck`", "A case failed, or erred because of the suite or the agent (a script that ran out, `max_turns`, an agent program that exited non-zero or timed out); or, with `run --coverage-min PCT`, less than PCT percent of the suites' rules and world parts was exercised; or, with `run --mutate-min PCT`, a suite's checks caught less than PCT percent of its mutants."},
	{exitFailed, "`validate --prove`", "A case's reference solution does not pass, or an agent that does nothing or a random one passes a case."},
	{exitFailed, "`compare`, `run --baseline`", "A change of a kind `--fail-on` names: by default a regression, a case or a check that passed in BASE and fails or errs now. The kinds found are said on standard error."},
	{exitFailed, "`reproduce`", "A drill's evidence or verdict differs from the report's."},
	{exitFailed, "`sweep --fail-on`", "A point had a verdict `--fail-on` names: `unsafe` (it broke an invariant), `failed` (its checks failed, or it was unsafe)."},
	{exitFailed, "`verify`", "A recording drifted from its upstream (or a request got no answer); with `--update`, a re-recorded case that did not pass, or a recording that could not be merged."},
	{exitFailed, "`inject --fail-on`", "A run under a payload had what `--fail-on` names: `attacked` (the attacker's goal was met), `utility` (the case's checks failed)."},
	{exitCallError, "`call`", "The tool answered an error result (an error outcome, an unmatched call, a world error); its text is printed."},
	{exitUsage, "every command", "A usage or spec error: nothing ran. This includes every problem `validate` reports, a `--filter` that matches no case, a report path whose directory does not exist, an API key missing for cases that need the live model, files `init` or `world import` would overwrite, and shards `merge` refuses."},
	{exitUsage, "`compare`, `run --baseline`", "A file that is not a whole run's JSON report (a shard's needs `dryfire merge` first), or a report with a case twice; nothing compared."},
	{exitInfra, "`run`, `merge`, `recheck`", "The only problems were infrastructure errors (a provider unreachable, a cassette missing in mode `none` or corrupt, a passthrough case in mode `none`, an agent program that cannot start), or a report could not be written after the run (1 if a case failed)."},
	{exitInfra, "`compare`", "The comparison could not be written (`--json`, `--markdown`, the job summary)."},
	{exitInfra, "`verify`", "`--update` could not re-record, or the JSON or Markdown could not be written."},
	{exitInfra, "`serve`, `engine`, `mcp-bridge`", "Could not serve: the address cannot be listened on, or the transport failed."},
	{exitInfra, "`init`, `world import`", "A file could not be written."},
	{exitInfra, "`sweep`, `inject`", "A case erred through its surroundings (a provider unreachable, a cassette missing) before any failure or payload was given it."},
	{exitCallUnreachable, "`call`", "No dryfire server answered at the URL, or it refused the request (the message says which)."},
	{exitStopped, "`run`", "Interrupted (Ctrl-C, SIGTERM or SIGHUP): the reports are written, and the cases not started are reported as skipped."},
	{exitStopped, "`sweep`, `inject`", "Interrupted: the table of the points (runs) that ran is printed; the others are left out."},
}

// runExit is the exit code of a finished run: a failed case, or one that
// erred through the suite or the agent, fails the run; errors of the
// surroundings alone (a provider unreachable, a cassette missing) are
// exit 3.
func runExit(rep *report.Report) int {
	switch failing, infra := rep.Outcome(); {
	case failing:
		return exitFailed
	case infra:
		return exitInfra
	}
	return exitOK
}

// compareExit is the exit code of a comparison (compare), and why: 1
// when it has a change of a kind failOn names; else 3 when an output
// could not be written; else 0.
func compareExit(c *report.Comparison, failOn []report.ChangeKind, writeFailed bool) (int, string) {
	var found, names []string
	for _, k := range failOn {
		names = append(names, string(k))
		if n := c.Count(k); n > 0 {
			found = append(found, fmt.Sprintf("%d %s", n, k))
		}
	}
	switch {
	case len(found) > 0:
		return exitFailed, fmt.Sprintf("%s (--fail-on %s)", strings.Join(found, ", "), strings.Join(names, ","))
	case writeFailed:
		return exitInfra, ""
	}
	return exitOK, ""
}

// baselineExit is the exit code of a run with --baseline, given the
// run's own (runExit): 1 when the comparison has a change of a kind
// failOn names, whatever failed before as it fails now; else 3 when the
// run's own code is (its only problems were infrastructure errors); else
// 0.
func baselineExit(run int, c *report.Comparison, failOn []report.ChangeKind) (int, string) {
	if code, why := compareExit(c, failOn, false); code == exitFailed {
		return code, why
	}
	if run == exitInfra {
		return exitInfra, ""
	}
	return exitOK, ""
}
