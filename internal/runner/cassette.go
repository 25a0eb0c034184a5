package runner

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// A case's cassette: the recorder of a real provider, read after the run and saved.

// realModel is the model of a case with a real provider: its calls go
// through the case's cassette recorder.
// A case's declared model faults are served by a FaultTransport over the
// recorder, returned when there are any.
func realModel(j job, passthrough bool, lv *live) (model.Model, *cassette.Recorder, *modelserver.FaultTransport, error) {
	a := &j.suite.Agent
	cred := wire.Resolve(a.Provider, a.BaseURL, lv.getenv)
	key, base := cred.Key, cred.BaseURL
	cfg := cassette.Config{
		Mode:        lv.mode,
		File:        j.cassette,
		SuiteFile:   j.suite.File,
		Root:        j.suite.ProjectRoot(),
		Case:        j.c.Name,
		Provider:    a.Provider,
		Live:        lv.transport,
		Passthrough: passthrough,
		Secrets:     append(slices.Clip(lv.secrets), key),
		Match:       j.suite.MatchRules(j.c),
		Trials:      j.trials,
		DropUser:    !hasModelUser(j.c),
	}
	cfg.LiveUnavailable = cred.LiveUnavailable(a.Provider)
	rr, err := checkServed(cfg.Root, j.cassette, lv.mode)
	if err != nil {
		return nil, nil, nil, err
	}
	if rr != nil {
		cfg.Rerecord, cfg.RecordedBy = rr, "dryfire serve"
	}
	rec, err := cassette.Open(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	retries, timeout := j.plan.Limits.Retries, j.plan.Limits.CallTimeout
	var transport http.RoundTripper = rec
	faults, _ := modelserver.NewFaultTransport(rec, ModelFaults(j.c)).(*modelserver.FaultTransport)
	if faults != nil {
		transport = faults
	}
	m, err := wire.New(wire.Options{
		Provider: a.Provider,
		Model:    a.Model,
		BaseURL:  base,
		APIKey:   key,
		Params:   a.Params,
		// Azure OpenAI's; the other providers take none.
		APIVersion: a.APIVersion,
		Client:     &http.Client{Transport: transport},
		Retries:    retries,
		Timeout:    timeout,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return m, rec, faults, nil
}

// cassetteUser is a case's cassette once its agent's run is over: the
// built-in loop's recorder or an agent.command case's model endpoint.
type cassetteUser interface {
	Problem() *cassette.ReplayError
	Failure() error
	Unplayed() *cassette.ReplayError
	Stats() (played, recorded, live int)
	// Finish writes the cassette when the case recorded something, and
	// says whether it did.
	Finish() (bool, error)
}

// savingRecorder is the built-in loop's recorder as a cassetteUser.
type savingRecorder struct{ *cassette.Recorder }

func (r savingRecorder) Finish() (bool, error) { return r.Save() }

// readCassette notes what the cassette says of the run: a request that
// differs from the recording or goes beyond it ends the case (its checks
// would judge half a run), a live call that failed errs it, and recorded
// calls left unplayed fail a case that otherwise finished (r.err nil).
// The case's count of live calls is set too.
func (r *ran) readCassette(cu cassetteUser, c *report.Case) {
	r.replay, r.live = cu.Problem(), cu.Failure()
	if r.replay == nil && r.live == nil && r.err == nil {
		r.unplayed = cu.Unplayed()
	}
	_, _, c.Live = cu.Stats()
}

// writeCassette writes the case's cassette and notes what it recorded;
// a cassette that cannot be written errs the case.
func writeCassette(cu cassetteUser, c *report.Case) {
	wrote, err := cu.Finish()
	if err != nil {
		c.Status, c.Infra = report.Errored, true
		c.Reason = "the case ran, but its cassette could not be saved: " + err.Error()
		return
	}
	if wrote {
		played, recorded, _ := cu.Stats()
		note := fmt.Sprintf("recorded %s into %s", calls(recorded), c.Cassette)
		switch {
		case recorded == 0 && played == 0:
			// An agent.command program that called no model: its
			// cassette says so, for replays without a key.
			note = fmt.Sprintf("recorded no model call into %s: the agent made none (the file lets replays run without a key)", c.Cassette)
		case played > 0:
			note = fmt.Sprintf("recorded %s into %s, after %d replayed", calls(recorded), c.Cassette, played)
		}
		c.Notes = append(c.Notes, note)
	}
}
