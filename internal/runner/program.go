package runner

import (
	"context"
	"errors"
	"io"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/program"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// programResult is how a program's run in one case ended.
type programResult struct {
	output string
	cut    bool   // the output went past program.MaxOutput
	stderr string // the last program.StderrLines lines of standard error
	err    error  // why the run failed, or nil
	infra  bool   // err is the surroundings': it could not start, or was interrupted
	failed bool   // err fails the case instead of erring it: a test's own agent threw
	note   string // a note for the case (a clock libfaketime could not set)
	// attempts are what the program tried past dryfire in its isolated
	// network.
	attempts []netjail.Attempt
	// conv is the conversation of a case with user:, each reply's
	// ModelTurn as a count of model calls begun.
	conv []agent.Exchange
}

// talk is a case's simulated user and how many model calls its program
// has begun, for a conversation (nil for a case of one input).
type talk struct {
	user *simUser
	turn func() int
}

// runProgram runs the suite's program for one case, in the suite's
// directory (or Options.CommandDir, or its workspace when ws is not nil),
// with the case's URLs at prefix.
//
// With jail, the program runs in that network namespace (and the jail is
// closed when it has exited, its attempts in the result).
//
// With cr, the program is a coding-agent CLI (agent.cli): its command line
// and its variables are the adapter's.
func runProgram(ctx context.Context, j job, opts Options, lv *live, prefix string, ws *caseWorkspace, jail *netjail.Jail, tk *talk, cr *cliRun) programResult {
	a := &j.suite.Agent
	dir := programDir(j, opts)
	ps := program.Spec{Argv: ws.command(dir, a.Command), Command: a.Command, Dir: dir, Stdin: j.c.Input, Timeout: j.plan.Limits.RunTimeout, Jail: jail}
	if cr != nil {
		ps.Argv = cr.argv
	}
	ps.Env = agentEnv(lv.env, prefix, j.c, j.suite.World != "", j.suite.Agent.Env, httpEnv(prefix, j.plan.Suite.World)...)
	if cr != nil {
		ps.Env = cr.environ(ps.Env, a.Env)
	}
	if len(opts.MCPBridge) > 0 {
		ps.Env = append(ps.Env, bridgeEnv(opts.MCPBridge, prefix+"/mcp")...)
	}
	if vars, clean, err := vertexEnv(prefix, lv.getenv); err != nil {
		return programResult{err: err, infra: true}
	} else {
		defer clean()
		ps.Env = append(ps.Env, vars...)
	}
	if ws != nil {
		ps.Dir = ws.dir
		ps.Env = append(ps.Env, EnvWorkspace+"="+ws.dir)
	}
	var clockNote string
	if clk := clockOf(a, opts); clk != nil {
		var vars []string
		vars, clockNote = clockEnv(clk, ps.Env, lv.getenv)
		ps.Env = append(ps.Env, vars...)
	}
	var conv []agent.Exchange
	var convErr error
	if tk != nil {
		ps.Env = append(ps.Env, EnvConversation+"=jsonl")
		lines := newLineWriter(program.MaxOutput, 2*spec.MaxUserTurns+2)
		ps.Stdout = lines
		ps.Talk = func(ctx context.Context, stdin io.WriteCloser, exited <-chan struct{}) {
			conv, convErr = converse(ctx, stdin, lines, exited, tk.user, j.c.Input, tk.turn)
		}
	}
	pr := program.Run(ctx, ps)
	r := programResult{output: pr.Output, cut: pr.Cut, stderr: pr.Stderr, err: pr.Err, infra: pr.Infra, note: clockNote, attempts: pr.Attempts, conv: conv}
	if tk != nil && len(conv) > 0 {
		r.output = conv[len(conv)-1].Reply
		if r.output == "" && len(conv) > 1 {
			r.output = conv[len(conv)-2].Reply
		}
	}
	if r.err == nil && convErr != nil {
		var ue *userError
		r.err, r.infra = convErr, errors.As(convErr, &ue)
	}
	return r
}
