package model

import (
	"slices"
	"strconv"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// scripted answers a scripted case's calls: each request, in whichever
// API it comes, is read into a Request (Wire.Request), the case's script
// picks the turn that answers it (Script.Pick: the first turn not yet
// served whose guard holds), and the turn is written in the request's
// API, streamed when it asks (Wire.Script). No cassette is opened;
// nothing goes live.
type scripted struct {
	script    *Script
	coalesce  bool
	noRecords bool

	mu     sync.Mutex
	served []ScriptAnswer
	err    error // the first request the script could not answer
}

// ScriptAnswer is one model request of a scripted case and the turn that
// answered it (Turn 0: none did, and Err says why).
type ScriptAnswer struct {
	Request  int // from 1, in arrival order
	Turn     int // from 1; 0: none
	API      string
	Streamed bool
	// LastMessage is the request's last message, for people: its role
	// (or tool and name) and its text.
	LastMessage string
	Err         error
}

// NewScripted answers a case's calls from its script's turns; coalesce
// writes a stream in one piece (Answer.Coalesce); noRecords keeps no list
// of the answers (Outcome.Served); names (nil: none) are the names each
// request may offer the suite's tools as (Script.SetNames).
func NewScripted(turns []*spec.Turn, coalesce, noRecords bool, names *tool.Names) Answerer {
	sc := NewScript(turns)
	sc.SetNames(names)
	return &scripted{script: sc, coalesce: coalesce, noRecords: noRecords}
}

func (s *scripted) Answer(c *Call) (*Answer, error) {
	req, err := c.Request()
	if err != nil {
		s.keep(ScriptAnswer{API: c.Wire.String(), Err: err}, err)
		return nil, err
	}
	if !c.Wire.Turn() {
		return c.Wire.Script(c, req, nil), nil // a token count: no turn
	}
	p, err := s.script.Pick(req)
	sa := ScriptAnswer{Request: p.Request, Turn: p.Turn, API: c.Wire.String(), Streamed: req.Params["stream"] == true, LastMessage: p.Last, Err: err}
	s.keep(sa, err)
	if err != nil {
		return nil, err
	}
	c.Placed = p
	r := &Response{Text: p.T.Text}
	for i, tc := range p.T.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, tool.Call{ID: tc.ID, Name: p.Names[i], Args: ArgsJSON(tc)})
	}
	a := c.Wire.Script(c, req, r)
	if s.coalesce {
		a.Coalesce()
	}
	// Nothing was spent: the answer's usage is the client's, not the
	// case's (whose usage, as a recorded case's, is what a model used).
	a.Usage = Usage{}
	return a, nil
}

// keep notes a request's answer, and the first error.
func (s *scripted) keep(sa ScriptAnswer, err error) {
	s.mu.Lock()
	if !s.noRecords {
		s.served = append(s.served, sa)
	}
	if err != nil && s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// Unanswer serves the cut turn again: its retry is answered by it.
func (s *scripted) Unanswer(c *Call) {
	p, ok := c.Placed.(Pick)
	if !ok {
		return
	}
	s.script.Unserve(p.Turn)
	s.mu.Lock()
	s.served = slices.DeleteFunc(s.served, func(sa ScriptAnswer) bool { return sa.Request == p.Request })
	s.mu.Unlock()
}

func (s *scripted) Save() (bool, error) { return false, nil }

func (s *scripted) End(o *Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o.Scripted, o.Script, o.Served = true, s.err, append([]ScriptAnswer(nil), s.served...)
	if turns := s.script.Unserved(); len(turns) > 0 {
		o.Unserved = &UnservedError{Turns: turns, Served: s.script.Served()}
	}
}

func (s *scripted) Reset() {
	s.script.Reset()
	s.mu.Lock()
	s.served, s.err = nil, nil
	s.mu.Unlock()
}

// NewAnswer is an answer with the headers it is written with: its
// Content-Type, a body's Content-Length, a stream's Cache-Control.
func NewAnswer(status int, contentType string, body []byte, events [][]byte) *Answer {
	a := &Answer{Status: status, Header: make(map[string][]string, 2), Body: body, Events: events, Streamed: events != nil, Cut: -1}
	if contentType != "" {
		a.Header["Content-Type"] = []string{contentType}
	}
	if events == nil {
		a.Header["Content-Length"] = []string{strconv.Itoa(len(body))}
	} else {
		a.Header["Cache-Control"] = noCache
	}
	return a
}

var noCache = []string{"no-cache"}

// Coalesce writes a stream in one piece: the same bytes, with a
// Content-Length, flushed once (several times faster, and no different to
// a client that parses the stream as a stream).
func (a *Answer) Coalesce() {
	if a.Events == nil {
		return
	}
	a.Body, a.Events = a.Bytes(), nil
	a.Header["Content-Length"] = []string{strconv.Itoa(len(a.Body))}
	a.Header["Cache-Control"] = noCache
}
