package runner

// Command checks (expect: - command: ...): after an agent program's run,
// each command check's command runs in the case's workspace (the suite's
// directory without one) by sh -c, under the case's network as the
// program did (a jail of its own each: isolated, sandboxed), its output
// (standard output and error together) kept to check.MaxCommandOutput,
// killed at its timeout. The check reads how it ran (check.CommandRun).

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/program"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
)

// runCommandChecks runs the case's command checks, in order; nil when it
// has none.
func runCommandChecks(ctx context.Context, j job, opts Options, lv *live, ws *caseWorkspace, mode string, dflt bool, sc *toolserver.Scope) map[*spec.Check]*check.CommandRun {
	var out map[*spec.Check]*check.CommandRun
	for _, ch := range j.c.Expect {
		if ch.Kind != spec.CheckCommand {
			continue
		}
		if out == nil {
			out = map[*spec.Check]*check.CommandRun{}
		}
		out[ch] = runCommandCheck(ctx, j, opts, lv, ws, mode, dflt, ch, sc)
	}
	return out
}

func runCommandCheck(ctx context.Context, j job, opts Options, lv *live, ws *caseWorkspace, mode string, dflt bool, ch *spec.Check, sc *toolserver.Scope) *check.CommandRun {
	timeout := ch.RunTimeout
	if timeout <= 0 {
		timeout = spec.DefaultCommandTimeout
	}
	dir := programDir(j, opts)
	env := program.Environ(lv.env, func(k string) bool { return k == EnvWorkspace }, nil)
	if ws != nil {
		dir = ws.dir
		env = append(env, EnvWorkspace+"="+ws.dir)
	}
	abs, _ := filepath.Abs(dir)
	jail, _, err := lv.host.openJail(mode, dflt, abs, nil, sc)
	if err != nil {
		return &check.CommandRun{ExitCode: -1, Problem: "could not run: " + err.Error()}
	}
	// Standard error into standard output: one output, in order.
	argv := []string{"sh", "-c", "exec 2>&1\n" + ch.Run}
	r := program.Run(ctx, program.Spec{Argv: argv, Command: []string{"sh", "-c", ch.Run}, Dir: dir, Env: env, Timeout: time.Duration(timeout * float64(time.Second)), Jail: jail})
	cr := &check.CommandRun{ExitCode: r.ExitCode, Output: r.Output, Cut: r.Cut}
	if n := len(cr.Output); n > check.MaxCommandOutput {
		cr.Output, cr.Cut = cr.Output[n-check.MaxCommandOutput:], true
	}
	switch {
	case r.TimedOut:
		cr.Problem = fmt.Sprintf("did not finish within %s s (its timeout_s), and was killed", strconv.FormatFloat(timeout, 'f', -1, 64))
	case r.Err != nil && r.ExitCode < 0:
		cr.Problem = r.Err.Error()
	}
	if len(r.Attempts) > 0 {
		cr.Problem = joinProblem(cr.Problem, fmt.Sprintf("tried to reach the network past dryfire (agent.network is %s)", mode))
	}
	return cr
}

func joinProblem(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
