package cassette

// In order: each call compared with the recorded request in its place.

import (
	"bytes"
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// place places a call in the case, in order: the index of the recorded
// interaction in its place that answers it, or -1 when it goes live.
// A client's own key is a secret from its first request on (whether it
// is forwarded or not): learned before the request is canonicalised.
func (a *Answerer) place(c *model.Call) (int, error) {
	req, body := c.HTTP, c.Body
	a.mu.Lock()
	defer a.mu.Unlock()
	if k := wire.ClientKey(req); len(k) >= redact.MinLen && !wire.IsDummy(k) && !slices.Contains(a.red, k) {
		a.red = redact.New(append(slices.Clone([]string(a.red)), k))
		a.seen = nil // what a request canonicalises to may change
	}
	if a.problem != nil {
		return -1, a.problem
	}
	if a.failure != nil {
		return -1, a.failure
	}
	if i := a.next; !a.live {
		var e *ReplayError
		var now Request
		if i < len(a.seen) && slices.ContainsFunc(a.seen[i], func(s seenRequest) bool { return bytes.Equal(s.body, body) && s.head.is(req) }) {
			// The same bytes as a request that matched before match
			// again: no need to canonicalise them.
			now = a.tape.Interactions[i].Request
		} else {
			var cb canonBody
			now, cb = a.canonical(req, body)
			e = &ReplayError{Kind: Mismatch}
			if i < len(a.tape.Interactions) {
				e.Diffs, e.More, e.Presets = compare(&a.tape.Interactions[i].Request, &now, cb, a.matchBodies(i, &cb))
			} else {
				e.Kind, e.Diffs = Beyond, []string{"request " + itoa(i+1) + ": " + now.Method + " " + now.Path}
			}
			if len(e.Diffs) == 0 {
				e = nil
				a.remember(i, req, body)
			}
		}
		switch {
		case e == nil:
			a.next++
			a.played++
			if a.records {
				a.out = append(a.out, Interaction{Request: now, Response: a.tape.Interactions[i].Response})
				a.outN = append(a.outN, c.N)
			}
			c.Placed = i
			return i, nil
		case a.cfg.Mode != New:
			e.File, e.Section, e.Fix, e.Request, e.Recorded = a.cfg.File, a.cfg.Section, a.cfg.fix(All), i+1, len(a.tape.Interactions)
			a.problem = e
			return -1, e
		}
		// New: from the first request the recording does not answer on,
		// everything is recorded live.
		a.live = true
	}
	why := a.cfg.LiveUnavailable
	if a.cfg.Live != nil {
		why = cmp.Or(a.cfg.Live.Unavailable(c), why)
	}
	if why != "" || a.cfg.Live == nil {
		a.failure = &LiveError{File: a.cfg.File, Section: a.cfg.Section, Request: a.played + a.sent + 1, Passthrough: a.cfg.Passthrough, Why: cmp.Or(why, "this run never goes live")}
		return -1, a.failure
	}
	a.sent++
	return -1, nil
}

// matchBodies applies the matching rules to the body of a request made
// now (in place: its stored bytes are kept as sent) and pairs it with
// recorded interaction i's, normalised once; nil without rules or when a
// body is not JSON. Call it with a.mu held.
func (a *Answerer) matchBodies(i int, cb *canonBody) *matched {
	if a.set == nil || !cb.json {
		return nil
	}
	rec := a.normalRecorded(i)
	if rec == nil {
		return nil
	}
	v, ap := a.set.Apply(cb.value)
	cb.value = v
	return &matched{rec: rec, nowAp: ap, nowBody: v}
}

// normalRecorded is recorded interaction i's body after the matching
// rules (nil when it is not JSON). Call it with a.mu held.
func (a *Answerer) normalRecorded(i int) *normal {
	if a.norm == nil {
		a.norm = make([]*normal, len(a.tape.Interactions))
	}
	if n := a.norm[i]; n != nil {
		return n
	}
	rq := &a.tape.Interactions[i].Request
	if !rq.JSON {
		return nil
	}
	v, err := value.Parse(rq.Body)
	if err != nil {
		return nil
	}
	v, ap := a.set.Apply(v)
	a.norm[i] = &normal{value: v, applied: ap}
	return a.norm[i]
}

// maxSeen bounds the raw forms of a request remembered per interaction.
const maxSeen = 4

// seenRequest is a request, as sent, that matched an interaction.
type seenRequest struct {
	head seenHead
	body []byte
}

func (a *Answerer) remember(i int, req *http.Request, body []byte) {
	if a.seen == nil {
		a.seen = make([][]seenRequest, len(a.tape.Interactions))
	}
	if len(a.seen[i]) < maxSeen {
		a.seen[i] = append(a.seen[i], seenRequest{headOf(req, i), slices.Clone(body)})
	}
}

// joinHeader is the values of matchHeaders[i] in h, joined.
func joinHeader(h http.Header, i int) string {
	vs := h[matchHeaderKeys[i]]
	switch len(vs) {
	case 0:
		return "\x00" // absent, unlike an empty value
	case 1:
		return vs[0]
	}
	return strings.Join(vs, ", ")
}

// secretParams are query parameters that carry keys: never written.
var secretParams = []string{"key", "api-key", "api_key", "access_token", "token"}

// canonical is the request as it is stored and matched.
func (a *Answerer) canonical(req *http.Request, body []byte) (Request, canonBody) {
	path := cmp.Or(wire.CanonicalPath(req.URL.EscapedPath()), "/") // a Vertex AI path's project and location aside
	if q := req.URL.RawQuery; q != "" {
		if vals, err := url.ParseQuery(q); err == nil {
			for k, vs := range vals {
				for i := range vs {
					if slices.Contains(secretParams, strings.ToLower(k)) {
						vs[i] = Redacted
					} else {
						vs[i] = a.red.String(vs[i])
					}
				}
			}
			path += "?" + vals.Encode()
		} else {
			path += "?" + a.red.String(q)
		}
	}
	var h map[string]string
	for i, name := range matchHeaders {
		if vs := req.Header[matchHeaderKeys[i]]; len(vs) > 0 {
			if h == nil {
				h = map[string]string{}
			}
			h[name] = a.red.String(strings.Join(vs, ", "))
		}
	}
	rules := a.rules
	if a.cfg.Provider == AnyAPI {
		rules = forPath(rules, req.URL.Path)
	}
	cb := canonicalBody(body, rules, a.red)
	return Request{Method: req.Method, Path: path, Header: h, Body: cb.bytes, JSON: cb.json}, cb
}
