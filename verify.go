package dryfire

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolrec"
	"github.com/dryfire-dev/dryfire/internal/verify"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/report"
)

// DefaultMaxRequests bounds the requests Verify sends, unless
// VerifyOptions.MaxRequests says otherwise.
const DefaultMaxRequests = 100

// VerifyOptions configure Project.Verify; nil means the defaults.
type VerifyOptions struct {
	// Filter, a regular expression, selects cases by name.
	Filter string
	// Env is where keys and base URLs are read (nil: os.Environ()).
	Env []string
	// MaxRequests bounds the requests sent: more are refused before any
	// is sent (0: DefaultMaxRequests).
	MaxRequests int
	// List says what would be sent and sends nothing.
	List bool
	// Update re-records the cases that drifted: their cassettes by a run
	// in RecordAll; with Tools, by record-tools with RefreshTools.
	Update bool
	// Tools, when set, are the real tools record-tools recorded (exactly
	// one of its Command, URL and HTTP): their recordings are verified
	// instead of the cassettes.
	Tools *RecordToolsOptions
}

// Verification is what Project.Verify found.
type Verification struct {
	// Drifts are how the recordings drifted, in suite and case order.
	Drifts []report.Drift `json:"drifts"`
	// Cases counts the cases verified (with a recording); Requests the
	// requests sent (with List: that would be), Drifted the cases that
	// drifted, Failed the requests that got no answer.
	Cases    int `json:"cases"`
	Requests int `json:"requests"`
	Drifted  int `json:"drifted"`
	Failed   int `json:"failed"`
	// Listed, with List, is each case's requests, "SUITE: CASE: WHAT".
	Listed []string `json:"listed,omitempty"`
	// Upstream names the real tools (with Tools).
	Upstream string `json:"upstream,omitempty"`
	// Updated are the cases re-recorded (Update), "SUITE: CASE", and
	// Update what re-recording them said: its report, or the recording.
	Updated     []string       `json:"updated,omitempty"`
	UpdateRun   *report.Report `json:"-"`
	UpdateTools *ToolRecording `json:"-"`
}

// Verify sends the recorded requests of the project's cases again to
// their real upstreams through the one live client (the cassettes' model
// calls; or, with Tools, record-tools' recorded calls and the tools'
// list) and says what drifted. Nothing is written unless Update asks;
// no key is ever in what it returns.
func (p *Project) Verify(ctx context.Context, o *VerifyOptions) (*Verification, error) {
	o = cmp.Or(o, &VerifyOptions{})
	if p.checkOnly {
		return nil, errCheckOnly
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	var filter *regexp.Regexp
	if o.Filter != "" {
		var err error
		if filter, err = regexp.Compile(o.Filter); err != nil {
			return nil, fmt.Errorf("filter %q: %w", o.Filter, err)
		}
	}
	max := o.MaxRequests
	if max <= 0 {
		max = DefaultMaxRequests
	}
	if o.Tools != nil {
		return p.verifyTools(ctx, o, env, filter, max)
	}
	v := &Verification{}
	type work struct {
		s    *spec.Suite
		name string
		reqs []verify.Request
	}
	var todo []work
	for _, s := range p.suites {
		names := make([]string, s.Len())
		for k := range names {
			names[k] = s.CaseName(k)
		}
		paths := cassette.Paths(s.File, names)
		for k, name := range names {
			c := s.CaseAt(k)
			if c.Skip || s.Scripted(c) || filter != nil && !filter.MatchString(name) {
				continue
			}
			cs, err := cassette.Load(paths[k])
			if errors.Is(err, os.ErrNotExist) {
				continue
			} else if err != nil {
				return nil, err
			}
			w := work{s: s, name: name, reqs: verify.Requests(cs)}
			v.Cases++
			v.Requests += len(w.reqs)
			for _, r := range w.reqs {
				v.Listed = append(v.Listed, fmt.Sprintf("%s: %s: request %d (%s)", s.File, name, r.N, r.What()))
			}
			todo = append(todo, w)
		}
	}
	if o.List {
		return v, nil
	}
	v.Listed = nil
	if err := tooMany(v, max); err != nil {
		return nil, err
	}
	getenv := envLookup(env)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	lives := map[*spec.Suite]*wire.Live{}
	red := redact.New(redact.FromEnviron(env))
	for _, w := range todo {
		if lives[w.s] != nil {
			continue
		}
		s := w.s
		l, err := wire.NewLive(wire.LiveOptions{Transport: transport, Getenv: func(k string) string {
			if s.Agent.BaseURL != "" && k == wire.BaseURLEnv(s.Agent.Provider) {
				return s.Agent.BaseURL
			}
			return getenv(k)
		}})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.File, err)
		}
		red = append(red, redact.New(l.Secrets)...)
		lives[s] = l
		for _, r := range w.reqs {
			c, err := r.Call(ctx)
			if err == nil {
				if why := l.Unavailable(c); why != "" {
					return nil, fmt.Errorf("%s: case %q: %s: nothing was sent", s.File, w.name, why)
				}
			}
		}
	}
	drifted := map[[2]string]bool{}
	for _, w := range todo {
		for _, r := range w.reqs {
			if ctx.Err() != nil {
				return nil, errors.New("interrupted")
			}
			diffs, err := verify.Send(ctx, lives[w.s], r)
			if err != nil {
				v.Failed++
				diffs = []string{"no answer: " + err.Error()}
			}
			if len(diffs) > 0 {
				v.Drifts = append(v.Drifts, report.Drift{Suite: w.s.File, Case: w.name, Request: r.N, What: r.What(), Differences: diffs})
				drifted[[2]string{w.s.File, w.name}] = true
			}
		}
	}
	v.Drifted = len(drifted)
	redactDrifts(v, red)
	if o.Update && len(drifted) > 0 {
		rep, err := p.Run(ctx, &RunOptions{Record: RecordAll, Env: env, Only: func(suite, name string) bool { return drifted[[2]string{suite, name}] }})
		if err != nil {
			return v, err
		}
		v.UpdateRun, v.Updated = rep, ran(rep)
	}
	return v, nil
}

// verifyTools verifies record-tools' recordings against o.Tools.
func (p *Project) verifyTools(ctx context.Context, o *VerifyOptions, env []string, filter *regexp.Regexp, max int) (*Verification, error) {
	t, red := target(o.Tools, env)
	v := &Verification{Upstream: red.String(t.Label())}
	type work struct {
		s     *spec.Suite
		calls []verify.Recorded
	}
	var todo []work
	for _, s := range p.suites {
		data, err := safeio.ReadFile(s.File, "suite", safeio.Limit(safeio.MaxYAML))
		if err != nil {
			return nil, err
		}
		w := work{s: s}
		cases := map[string]bool{}
		for _, c := range verify.RecordedCalls(s, data) {
			if filter == nil || filter.MatchString(c.Case) {
				w.calls = append(w.calls, c)
				cases[c.Case] = true
				v.Listed = append(v.Listed, fmt.Sprintf("%s: %s: tool %q (%s)", s.File, c.Case, c.Tool, c.At))
			}
		}
		if len(w.calls) == 0 && len(s.Tools) == 0 {
			continue
		}
		v.Cases += len(cases)
		v.Requests += len(w.calls)
		todo = append(todo, w)
	}
	v.Requests++ // the tools' list
	if o.List {
		return v, nil
	}
	v.Listed = nil
	if err := tooMany(v, max); err != nil {
		return nil, err
	}
	up, err := toolrec.Dial(ctx, t)
	if err != nil {
		return nil, errors.New(red.String(err.Error()))
	}
	drifted := map[[2]string]bool{}
	for _, w := range todo {
		for _, d := range verify.Tools(ctx, up, w.s, w.calls) {
			v.Drifts = append(v.Drifts, d)
			drifted[[2]string{d.Suite, d.Case}] = true
		}
	}
	up.Close()
	v.Drifted = len(drifted)
	redactDrifts(v, red)
	if o.Update && len(drifted) > 0 {
		ro := RunOptions{Env: env, Only: func(suite, name string) bool { return drifted[[2]string{suite, name}] || drifted[[2]string{suite, ""}] }}
		rt := *o.Tools
		rt.Run, rt.RefreshTools = &ro, true
		rec, err := p.RecordTools(ctx, &rt)
		if err != nil {
			return v, err
		}
		v.UpdateTools, v.Updated = rec, ran(rec.Report)
	}
	return v, nil
}

// tooMany refuses more requests than max.
func tooMany(v *Verification, max int) error {
	if v.Requests <= max {
		return nil
	}
	return fmt.Errorf("verify would send %d requests, more than --max-requests %d (dryfire.DefaultMaxRequests is %d): raise it, or choose cases with --filter", v.Requests, max, DefaultMaxRequests)
}

// ran are the cases a report ran to their end, "SUITE: CASE": an
// errored case's recording is not written.
func ran(rep *report.Report) []string {
	var out []string
	for _, c := range rep.Cases {
		if c.Status != report.Skipped && c.Status != report.Errored {
			out = append(out, c.Suite+": "+c.Name)
		}
	}
	return out
}

// redactDrifts takes every secret out of what a verification says.
func redactDrifts(v *Verification, red redact.Redactor) {
	for i := range v.Drifts {
		d := &v.Drifts[i]
		d.What = red.String(d.What)
		for k := range d.Differences {
			d.Differences[k] = red.String(d.Differences[k])
		}
	}
}

// envLookup reads an environment list.
func envLookup(env []string) func(string) string {
	return func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
}
