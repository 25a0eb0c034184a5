package report

// Evidence is the record of one operation of a drill, whatever transport
// made it: who called what, with which arguments, what shaped the answer
// (an override, a fault) and what came back. A world suite's case and a
// Go drill (package drill) keep it alike.
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
