package drill

import "github.com/dryfire-dev/dryfire/internal/world"

// Evidence is the record of one operation of a drill: who called what, with
// which arguments, what shaped the answer (an override, a fault) and what
// came back. It is also the evidence of a world suite's case in the JSON
// report, in this shape.
type Evidence struct {
	Seq            int               `json:"seq"`
	Time           string            `json:"time"` // the world's virtual time, RFC 3339
	Actor          string            `json:"actor"`
	Operation      string            `json:"operation"` // package/operation
	Arguments      any               `json:"arguments"`
	IdempotencyKey *string           `json:"idempotency_key"`
	Override       *OverrideEvidence `json:"override"`
	Fault          *string           `json:"fault"`
	Outcome        string            `json:"outcome"`
	IsError        bool              `json:"is_error"`
	Result         any               `json:"result"`
	StateVersion   int               `json:"state_version"`
	// HTTP is the request of a call over its package's own HTTP API.
	HTTP *HTTPEvidence `json:"http,omitempty"`
	// LatencyMS is the operation's latency: the call answered this many
	// milliseconds of virtual time after Time.
	LatencyMS float64 `json:"latency_ms,omitempty"`
}

// HTTPEvidence is the HTTP request that made a call: its method, its path
// under the package's base URL, and the route (template) it matched.
type HTTPEvidence struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Route  string `json:"route"`
}

// OverrideEvidence is the override that shaped a call.
type OverrideEvidence struct {
	ID         string `json:"id"`
	Scope      string `json:"scope"` // world, scenario, drill or test
	Outcome    string `json:"outcome"`
	MatchCount int    `json:"match_count"`
	// Remaining is the matches left; nil when the rule is unlimited.
	Remaining *int `json:"remaining"`
}

// Event is an event a behavior emitted (ctx.emit).
type Event struct {
	Seq       int    `json:"seq"` // the evidence entry of the call that emitted it
	Time      string `json:"time"`
	Operation string `json:"operation"`
	Type      string `json:"type"`
	Data      any    `json:"data"`
}

// evidenceOf is the world's evidence in the public shape.
func evidenceOf(in []world.Evidence) []Evidence {
	if in == nil {
		return nil
	}
	out := make([]Evidence, len(in))
	for i, e := range in {
		out[i] = Evidence{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Operation: e.Operation, Arguments: e.Arguments,
			IdempotencyKey: e.IdempotencyKey, Fault: e.Fault, Outcome: e.Outcome, IsError: e.IsError, Result: e.Result,
			StateVersion: e.StateVersion, HTTP: (*HTTPEvidence)(e.HTTP), LatencyMS: e.LatencyMS}
		if o := e.Override; o != nil {
			out[i].Override = &OverrideEvidence{ID: o.ID, Scope: o.Scope.String(), Outcome: o.Outcome, MatchCount: o.MatchCount, Remaining: o.Remaining}
		}
	}
	return out
}

// eventsOf is the world's emitted events in the public shape.
func eventsOf(in []world.Emitted) []Event {
	if in == nil {
		return nil
	}
	out := make([]Event, len(in))
	for i, e := range in {
		out[i] = Event(e)
	}
	return out
}
