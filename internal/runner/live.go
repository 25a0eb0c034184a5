package runner

import (
	"cmp"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// What the cases of one run share to reach real models: keys, the transport, the host of agent.command programs.

// live is what the cases of one run share to reach real models.
type live struct {
	mode      cassette.Mode
	getenv    func(string) string
	secrets   []string
	red       redact.Redactor   // of secrets, applied to each case's report
	transport http.RoundTripper // nil in None mode
	env       []string          // the run's environment
	host      *host             // serves agent.command cases; nil when there are none
	templates *templates        // workspace templates, scanned once
	cov       *coverage         // Options.Coverage; nil: not counted
	mutate    bool              // Options.Mutate
}

// hostPort is the port of the run's host: Options.Port, else the
// agent.port its agent.command suites name (all the same one), else 0 (a
// free port); asked says which, for an error.
func hostPort(jobs *jobList, opts Options) (port int, asked string, err error) {
	if opts.Port > 0 {
		return opts.Port, "dryfire run --port", nil
	}
	var at yamlpos.Pos
	for _, rs := range jobs.suites {
		a := &rs.s.Agent
		if len(a.Command) == 0 || a.Port == 0 {
			continue
		}
		if port != 0 && a.Port != port {
			return 0, "", fmt.Errorf("agent.port: the suites ask for two ports, %d (%s) and %d (%s): one run serves every agent program on one port; give them the same one, or run them apart, or pass dryfire run --port", port, at, a.Port, a.PortPos)
		}
		port, at = a.Port, a.PortPos
	}
	return port, "agent.port", nil
}

// needsHost says whether a case to run is an agent.command program's,
// which a host serves.
func needsHost(jobs *jobList) bool {
	if !slices.ContainsFunc(jobs.suites, func(rs runSuite) bool { return len(rs.s.Agent.Command) > 0 }) {
		return false
	}
	for ci := range jobs.n {
		if rs, _ := jobs.at(ci); len(rs.s.Agent.Command) > 0 && !jobs.skipped(ci) {
			return true
		}
	}
	return false
}

// withCommand is a copy of the suite whose agent is the program command
// (Options.Command): the suite's cases, checks and world, another agent.
// The provider stays: script (the cases' scripts answer the program's
// model calls), or the API the program calls.
func withCommand(s *spec.Suite, command []string) *spec.Suite {
	cp := *s
	cp.Agent.Command = command
	cp.ScriptDrills = cp.ScriptDrills || cp.NoAgent
	cp.NoAgent = false
	return &cp
}

func supported(s *spec.Suite) error {
	if s.NoAgent {
		return nil // its drills are skipped
	}
	if slices.Contains(provider.Names, s.Agent.Provider) || s.Agent.Provider == "" && len(s.Agent.Command) > 0 {
		return nil
	}
	return &UnsupportedError{Pos: s.Agent.ProviderPos, Msg: fmt.Sprintf("provider %q is not available in this version of dryfire", s.Agent.Provider)}
}

// MissingKeyError lists the cases that need a live model whose key is
// not set: found before the run, which then does not start.
type MissingKeyError struct {
	Mode    cassette.Mode
	Missing []MissingKey
}

// MissingKey is one environment variable that is not set and the cases
// that need it.
type MissingKey struct {
	Env   string
	Cases []string // "SUITE: CASE (why)"
}

// maxListed bounds the cases a MissingKeyError names per key.
const maxListed = 10

func (e *MissingKeyError) Error() string {
	var b strings.Builder
	for i, m := range e.Missing {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s is not set, and %s the live model:", m.Env, map[bool]string{true: "this case needs", false: fmt.Sprintf("these %d cases need", len(m.Cases))}[len(m.Cases) == 1])
		for j, c := range m.Cases {
			if j == maxListed {
				fmt.Fprintf(&b, "\n  … and %d more", len(m.Cases)-maxListed)
				break
			}
			b.WriteString("\n  " + c)
		}
	}
	b.WriteString("\nset it")
	if len(e.Missing) > 1 {
		b.WriteString(" (them)")
	}
	if e.Mode != cassette.None {
		b.WriteString(", or replay only with --record none")
	}
	return b.String()
}

// prepareLive resolves the record mode and the environment, and checks
// before anything runs that every case that will need a live model has
// its key.
func prepareLive(jobs *jobList, opts Options) (*live, error) {
	lv, err := newLive(opts)
	if err != nil {
		return nil, err
	}
	// Credentials in base URLs are secrets too, for the cassettes and the
	// report.
	for k, rs := range jobs.suites {
		if !jobs.selects(k) {
			continue
		}
		lv.secrets = append(lv.secrets, redact.FromURL(rs.s.Agent.BaseURL)...)
		if p := rs.s.Agent.Provider; p != provider.Script {
			lv.secrets = append(lv.secrets, redact.FromURL(lv.getenv(wire.BaseURLEnv(p)))...)
		}
	}
	lv.red = redact.New(lv.secrets)
	kc := &keyCheck{lv: lv, missing: map[string][]string{}}
	for i := range jobs.jobs {
		// A stub has no judge check and no simulated user.
		ci, _ := jobs.caseOf(i)
		if rs, k := jobs.at(ci); rs.s.NoAgent || rs.s.Agent.Provider == provider.Script && len(rs.s.Agent.Command) == 0 && rs.s.Stubbed(k) {
			continue
		}
		if j := jobs.job(i); !j.c.Skip && !j.suite.NoAgent {
			kc.judges(j)
			kc.user(j)
			kc.agent(j)
		}
	}
	if len(kc.order) > 0 {
		e := &MissingKeyError{Mode: lv.mode}
		for _, env := range kc.order {
			e.Missing = append(e.Missing, MissingKey{Env: env, Cases: kc.missing[env]})
		}
		return nil, e
	}
	if kc.needsModel {
		lv.connect(opts, false)
	}
	return lv, nil
}

// keyCheck finds the keys a run's cases need and the environment lacks:
// a case needs its model's key when it will call it live.
type keyCheck struct {
	lv         *live
	needsModel bool                // a case calls a model, live or replayed
	missing    map[string][]string // by key variable: "SUITE: CASE (why)"
	order      []string            // the variables, first seen first
}

func (kc *keyCheck) need(j job, keyEnv, why string) {
	if _, ok := kc.missing[keyEnv]; !ok {
		kc.order = append(kc.order, keyEnv)
	}
	kc.missing[keyEnv] = append(kc.missing[keyEnv], j.suite.File+": "+j.c.Name+" ("+why+")")
}

// judges: a judge check's model, whoever the agent is.
func (kc *keyCheck) judges(j job) {
	for _, jd := range judges(j.c) {
		kc.needsModel = true
		keyEnv := liveMissing(jd.Provider, jd.BaseURL, kc.lv.getenv)
		if keyEnv == "" {
			continue
		}
		switch file := j.judgeFile(jd); {
		case kc.lv.mode == cassette.All:
			kc.need(j, keyEnv, fmt.Sprintf("judge %d, --record all", jd.Index))
		case kc.lv.mode == cassette.Once:
			if noCassette(j, file) {
				kc.need(j, keyEnv, "no judge cassette yet: "+file)
			}
		}
	}
}

// user: a model-driven user's model.
func (kc *keyCheck) user(j job) {
	u := j.c.User
	if u == nil || u.Model == nil {
		return
	}
	kc.needsModel = true
	keyEnv := liveMissing(u.Model.Provider, u.Model.BaseURL, kc.lv.getenv)
	if keyEnv == "" {
		return
	}
	switch file := j.userFile(); {
	case kc.lv.mode == cassette.All:
		kc.need(j, keyEnv, "the simulated user, --record all")
	case kc.lv.mode == cassette.Once:
		if cassette.CheckPath(j.suite.ProjectRoot(), file) != nil {
			return
		}
		if c, err := cassette.Load(file); err != nil || c.User == nil {
			kc.need(j, keyEnv, "no recording of the simulated user yet in "+file)
		}
	}
}

// agent: the agent's own model (a script answers without one, whoever
// the agent is).
func (kc *keyCheck) agent(j job) {
	p := j.suite.Agent.Provider
	if p == provider.Script {
		return
	}
	kc.needsModel = true
	var keyEnv string
	if len(j.suite.Agent.Command) > 0 {
		keyEnv = commandKeyMissing(&j.suite.Agent, kc.lv.getenv)
	} else {
		keyEnv = liveMissing(p, j.suite.Agent.BaseURL, kc.lv.getenv)
	}
	if keyEnv == "" {
		return
	}
	var why string
	switch {
	case j.plan.UsesImpl:
		if kc.lv.mode != cassette.None {
			why = "runs passthrough code, so it always calls the live model"
		}
	case kc.lv.mode == cassette.All:
		why = "--record all"
	case kc.lv.mode == cassette.Once:
		if noCassette(j, j.cassette) {
			why = "no cassette yet: " + j.cassette
		}
	}
	if why != "" {
		kc.need(j, keyEnv, why)
	}
}

// noCassette says that job j's cassette file does not exist yet. One
// that may not be read (outside the project root: cassette.CheckPath) is
// not looked at: the case errs when it opens it, whatever key is set.
func noCassette(j job, file string) bool {
	if cassette.CheckPath(j.suite.ProjectRoot(), file) != nil {
		return false
	}
	_, err := os.Stat(file)
	return err != nil
}

// liveMissing names the variable that live calls of a provider of the
// built-in loop lack, "" when none: its key (a local openai-compatible
// server takes none), and first, for Azure OpenAI without base, its
// endpoint.
func liveMissing(p, base string, getenv func(string) string) string {
	cred := wire.Resolve(p, base, getenv)
	switch {
	case provider.IsAzure(p) && cred.BaseURL == "":
		return wire.AzureEndpointEnv
	case cred.Key == "" && cred.KeyEnv != "" && p != provider.OpenAICompatible:
		return cred.KeyEnv
	}
	return ""
}

// newLive reads the run's environment and record mode.
func newLive(opts Options) (*live, error) {
	env, getenv := cassette.Env(opts.Env)
	mode := cmp.Or(opts.Record, cassette.DefaultMode(getenv))
	if _, err := cassette.ParseMode(string(mode)); err != nil {
		return nil, err
	}
	// Every secret the run knows of, for the cassettes and the report.
	secrets := redact.FromEnv(env)
	return &live{mode: mode, getenv: getenv, env: env, templates: &templates{}, secrets: secrets, red: redact.New(secrets)}, nil
}

// connect readies the live side: the transport to real APIs, unless only
// replaying (and not always, for drills that choose their own record
// mode).
func (lv *live) connect(opts Options, always bool) {
	if lv.mode != cassette.None || always {
		lv.transport = opts.Live
		if lv.transport == nil {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.MaxIdleConnsPerHost = max(opts.Concurrency, DefaultConcurrency)
			lv.transport = t
		}
	}
}
