package modelserver

import (
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// scripted is the answerer of a scripted case: each request, in whichever
// API it comes, is read into the provider-neutral model.Request
// (wirereq.go), the case's script picks the turn that answers it
// (model.Script.Pick: the first turn not yet served whose guard holds),
// and the turn is written in the request's API, streamed when it asks
// (render.go). No cassette is opened; nothing goes live.
type scripted struct {
	e        *Endpoint
	script   *model.Script
	coalesce bool

	mu     sync.Mutex
	served []ScriptAnswer
	err    error // the first request the script could not answer
}

// ScriptAnswer is one model request of a scripted case and the turn that
// answered it (Turn 0: none did, and Err says why).
type ScriptAnswer struct {
	Request  int // from 1, in arrival order
	Turn     int // from 1; 0: none
	API      wire.API
	Streamed bool
	// LastMessage is the request's last message, for people: its role
	// (or tool and name) and its text.
	LastMessage string
	Err         error
}

func newScripted(e *Endpoint, turns []*spec.Turn, coalesce bool) *scripted {
	return &scripted{e: e, script: model.NewScript(turns), coalesce: coalesce}
}

func (s *scripted) answer(w http.ResponseWriter, r *http.Request, api wire.API, body []byte) {
	wr, err := wire.ReadRequest(api, r.URL, body)
	if err != nil {
		s.keep(ScriptAnswer{API: api, Err: err}, err)
		status := refuse(w, api, err)
		s.e.note(Call{API: api, Status: status, Err: err})
		return
	}
	if api == wire.GeminiCountTokens {
		// Counted, not answered by a turn.
		a := render(api, wr, body, nil, 0)
		a.write(w)
		s.e.note(Call{API: api, Status: a.status, Streamed: false})
		return
	}
	p, err := s.script.Pick(&wr.Request)
	sa := ScriptAnswer{Request: p.Request, Turn: p.Turn, API: api, Streamed: wr.Stream, LastMessage: p.Last, Err: err}
	if err != nil {
		s.keep(sa, err)
		status := refuse(w, api, err)
		s.e.note(Call{API: api, Status: status, Err: err})
		return
	}
	a := render(api, wr, body, p.T, p.Request)
	if a.streamed && s.coalesce {
		a = coalesced(a)
	}
	a.write(w)
	cut := cutOff(w)
	if cut {
		// The retry is answered by the same turn.
		s.script.Unserve(p.Turn)
	} else {
		s.keep(sa, nil)
	}
	// Nothing was spent: the answer's usage is the client's, not the
	// case's (whose usage, as a recorded case's, is what a model used).
	c := a.call(api, cut)
	c.Usage = model.Usage{}
	s.e.note(c)
}

// keep notes a request's answer, and the first error.
func (s *scripted) keep(sa ScriptAnswer, err error) {
	s.mu.Lock()
	if !s.e.opts.NoRecords {
		s.served = append(s.served, sa)
	}
	if err != nil && s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *scripted) reset() {
	s.script.Reset()
	s.mu.Lock()
	s.served, s.err = nil, nil
	s.mu.Unlock()
}

// coalesced is a stream answer written in one piece (Options.CoalesceStreams).
func coalesced(a answer) answer {
	n := 0
	for _, ev := range a.events {
		n += len(ev)
	}
	body := make([]byte, 0, n)
	for _, ev := range a.events {
		body = append(body, ev...)
	}
	a.body, a.events, a.streamed, a.cacheControl = body, nil, false, true
	a.length = []string{strconv.Itoa(len(body))}
	return a
}

// ScriptAnswers are the requests of a scripted case and the turns that
// answered them, in arrival order (none for a recorded case, or with
// Options.NoRecords).
func (e *Endpoint) ScriptAnswers() []ScriptAnswer {
	if e.scr == nil {
		return nil
	}
	e.scr.mu.Lock()
	defer e.scr.mu.Unlock()
	return append([]ScriptAnswer(nil), e.scr.served...)
}

// ScriptError is the first request of a scripted case its script could
// not answer (no turn's guard held for it, a turn called a tool it did not
// offer, a body that was not JSON), or nil: the case errs with it.
func (e *Endpoint) ScriptError() error {
	if e.scr == nil {
		return nil
	}
	e.scr.mu.Lock()
	defer e.scr.mu.Unlock()
	return e.scr.err
}

// Unserved is a *model.UnservedError naming the turns of a scripted
// case's script no request was answered by (optional ones aside), or nil.
func (e *Endpoint) Unserved() error {
	if e.scr == nil {
		return nil
	}
	if turns := e.scr.script.Unserved(); len(turns) > 0 {
		return &model.UnservedError{Turns: turns, Served: e.scr.script.Served()}
	}
	return nil
}

// IsScriptError says whether err is the script's (ScriptError).
func IsScriptError(err error) bool {
	var nt *model.NoTurnError
	var no *model.ToolNotOfferedError
	return errors.As(err, &nt) || errors.As(err, &no) || errors.Is(err, wire.ErrNotJSON)
}
