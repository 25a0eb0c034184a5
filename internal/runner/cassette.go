package runner

import (
	"fmt"
	"net/http"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/report"
)

// A case's cassette: the recorder of a real provider, read after the run and saved.

// realModel is the model of a case with a real provider: its client
// calls go through the case's model endpoint (its cassette, with the
// case's declared faults), the transport of its HTTP client.
func realModel(j job, passthrough bool, lv *live) (model.Model, *modelserver.Endpoint, error) {
	a := &j.suite.Agent
	return recordedModel(j, lv, j.cassette, a.Provider, a.Model, a.BaseURL, func(eo *modelserver.Options, o *wire.Options) {
		eo.Passthrough, eo.Match, eo.DropUser, eo.Faults = passthrough, j.suite.MatchRules(j.c), !hasModelUser(j.c), ModelFaults(j.c)
		o.Params, o.Retries, o.Timeout = a.Params, j.plan.Limits.Retries, j.plan.Limits.CallTimeout
	})
}

// recordedModel is the built-in loop's client of provider prov (model
// name, base its base_url), its calls going through a model endpoint on
// cassette file of case j; set sets what differs from a side model's
// options (sideModel).
func recordedModel(j job, lv *live, file, prov, name, base string, set func(*modelserver.Options, *wire.Options)) (model.Model, *modelserver.Endpoint, error) {
	cred := wire.Resolve(prov, base, lv.getenv)
	eo, err := recordedOptions(j, lv, file, prov, base)
	if err != nil {
		return nil, nil, err
	}
	eo.LiveUnavailable = cred.LiveUnavailable(prov)
	o := wire.Options{Provider: prov, Model: name, BaseURL: cred.BaseURL, APIKey: cred.Key, Retries: wire.DefaultRetries, Getenv: lv.getenv}
	if prov == j.suite.Agent.Provider {
		o.APIVersion = j.suite.Agent.APIVersion // Azure OpenAI's; the other providers take none
	}
	set(&eo, &o)
	ep, err := modelserver.New(eo)
	if err != nil {
		return nil, nil, err
	}
	o.Client = &http.Client{Transport: ep}
	m, err := wire.New(o)
	if err != nil {
		return nil, nil, err
	}
	return m, ep, nil
}

// recordedOptions are the options of a model endpoint on cassette file of
// case j, whose live calls go to provider prov at base (its base_url),
// in the run's mode, with its environment; a cassette that dryfire serve
// recorded is the serve command's to record again (checkServed).
func recordedOptions(j job, lv *live, file, prov, base string) (modelserver.Options, error) {
	o := modelserver.Options{Config: cassette.Config{File: file, SuiteFile: j.suite.File, Root: j.suite.ProjectRoot(), Case: j.c.Name, Mode: lv.mode, Secrets: lv.secrets, Trials: j.trials, Provider: prov},
		Getenv: lv.getenv, Transport: lv.transport, BaseURLs: map[string]string{wire.BaseURLEnv(prov): base}}
	rr, err := checkServed(o.Root, file, lv.mode)
	if rr != nil {
		o.Rerecord, o.RecordedBy = rr, "dryfire serve"
	}
	return o, err
}

// readCassette notes what the cassette says of the run: a request that
// differs from the recording or goes beyond it ends the case (its checks
// would judge half a run), a live call that failed errs it, and recorded
// calls left unplayed fail a case that otherwise finished (r.err nil).
// The case's count of live calls is set too.
func (r *ran) readCassette(o *model.Outcome, c *report.Case) {
	r.replay, r.live = replayError(o.Replay), o.Live
	if r.replay == nil && r.live == nil && r.err == nil {
		r.unplayed = replayError(o.Unplayed)
	}
	c.Live = o.Sent
}

// replayError is err as the cassette's replay error, or nil.
func replayError(err error) *cassette.ReplayError {
	re, _ := err.(*cassette.ReplayError)
	return re
}

// writeCassette writes the case's cassette and notes what it recorded;
// a cassette that cannot be written errs the case.
func writeCassette(ep *modelserver.Endpoint, o *model.Outcome, c *report.Case) {
	wrote, err := ep.Save()
	if err != nil {
		c.Status, c.Infra = report.Errored, true
		c.Reason = "the case ran, but its cassette could not be saved: " + err.Error()
		return
	}
	if wrote {
		played, recorded := o.Played, o.Recorded
		note := fmt.Sprintf("recorded %s into %s", plural(recorded, "model call", "model calls"), c.Cassette)
		switch {
		case recorded == 0 && played == 0:
			// An agent.command program that called no model: its
			// cassette says so, for replays without a key.
			note = fmt.Sprintf("recorded no model call into %s: the agent made none (the file lets replays run without a key)", c.Cassette)
		case played > 0:
			note = fmt.Sprintf("recorded %s into %s, after %d replayed", plural(recorded, "model call", "model calls"), c.Cassette, played)
		}
		c.Notes = append(c.Notes, note)
	}
}
