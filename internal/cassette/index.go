package cassette

import (
	"bytes"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// index answers requests from a recording by their content (Config.
// ByContent), independent of their order: a request is answered by the
// first recorded interaction whose request, in canonical form, equals it.
// A server that several clients replay one conversation against at once
// (dryfire serve) uses it; a case's own run matches in order (place),
// which also tells a request sent twice from one sent once.
//
// The canonical forms of the recording are computed once, when the index
// is made; a request is canonicalised only the first time its exact bytes
// are seen (method, path, query, the headers that change the answer and
// the body: the forms that matched are remembered, up to a bound), and
// one seen before is found by its body's bytes, without a lock or a
// copy. It keeps no state per request, so its memory does not grow with
// the requests it answers. Nothing it reads of the Answerer changes once
// it is made (no key is learned, no body normalised again): find takes
// no lock of the Answerer's.
type index struct {
	keys map[string]int // canonical key -> the first interaction with it

	// seen maps the body of each request answered before, exactly as
	// sent, to the heads it was sent with and the interaction that
	// answered it. It is replaced, never changed, under mu: readers load
	// it without a lock.
	seen  atomic.Pointer[map[string][]seenHead]
	mu    sync.Mutex
	n     int // heads in seen
	max   int // bound on n
	bytes int // bodies' bytes in seen, at most MaxSeenBytes
}

// MaxSeenBytes bounds the bytes of the request bodies an Index remembers
// (seen): past it, a request is canonicalised each time, as at first.
const MaxSeenBytes = 16 << 20

// seenHead is what, besides its body, a request answered before was sent
// with (the method, the path as parsed and as sent: the canonical form
// is of EscapedPath, a function of the two; the query and the headers
// kept), and the interaction that answered it.
type seenHead struct {
	method, path, rawPath, query string
	header                       [len(matchHeaders)]string
	i                            int
}

func headOf(req *http.Request, i int) seenHead {
	h := seenHead{method: req.Method, path: req.URL.Path, rawPath: req.URL.RawPath, query: req.URL.RawQuery, i: i}
	for k := range matchHeaders {
		h.header[k] = joinHeader(req.Header, k)
	}
	return h
}

// is reports whether req was sent with this head.
func (h *seenHead) is(req *http.Request) bool {
	if h.method != req.Method || h.path != req.URL.Path || h.rawPath != req.URL.RawPath || h.query != req.URL.RawQuery {
		return false
	}
	for k := range matchHeaders {
		if h.header[k] != joinHeader(req.Header, k) {
			return false
		}
	}
	return true
}

// newIndex is the content index of the recording, made by Open.
func (a *Answerer) newIndex() *index {
	ix := &index{keys: make(map[string]int, len(a.tape.Interactions)), max: 1024 + 8*len(a.tape.Interactions)}
	ix.seen.Store(&map[string][]seenHead{})
	for i := range a.tape.Interactions {
		k := a.recordedKey(i)
		if _, dup := ix.keys[k]; !dup {
			ix.keys[k] = i
		}
	}
	return ix
}

// find is the interaction that answers a request by its content, or a
// *ReplayError naming the closest recorded request and how this one
// differs from it. A request that finds nothing changes nothing: the
// next is looked up afresh. Neither the index nor the error keeps body:
// the caller may use its buffer again.
func (a *Answerer) find(c *model.Call) (int, error) {
	ix, req, body := a.index, c.HTTP, c.Body
	for _, h := range (*ix.seen.Load())[string(body)] {
		if h.is(req) {
			return h.i, nil
		}
	}
	now, cb := a.canonical(req, body)
	var nowAp reqmatch.Applied
	if a.set != nil && cb.json {
		cb.value, nowAp = a.set.Apply(cb.value)
	}
	i, ok := ix.keys[requestKey(&now, cb)]
	if !ok {
		return -1, a.miss(&now, cb, nowAp)
	}
	ix.remember(req, body, i)
	return i, nil
}

// remember adds a request that interaction i answered to seen (a new
// map, with a new list for its body), unless it is there or seen is
// full.
func (ix *index) remember(req *http.Request, body []byte, i int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := *ix.seen.Load()
	heads := old[string(body)]
	for k := range heads {
		if heads[k].is(req) {
			return // another request with the same bytes came first
		}
	}
	if ix.n >= ix.max || (heads == nil && ix.bytes+len(body) > MaxSeenBytes) {
		return
	}
	if heads == nil {
		ix.bytes += len(body)
	}
	m := make(map[string][]seenHead, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[string(body)] = append(slices.Clip(heads), headOf(req, i))
	ix.seen.Store(&m)
	ix.n++
}

// miss is the error for a request no interaction answers: its
// differences from the closest recorded request (the fewest differences;
// the first such).
func (a *Answerer) miss(now *Request, cb canonBody, nowAp reqmatch.Applied) error {
	best, bestN := -1, 0
	var diffs, fix []string
	var more int
	for i := range a.tape.Interactions {
		var mt *matched
		if cb.json && a.norm != nil && a.norm[i] != nil { // all computed when the Index was made
			mt = &matched{rec: a.norm[i], nowAp: nowAp, nowBody: cb.value}
		}
		d, m, f := compare(&a.tape.Interactions[i].Request, now, cb, mt)
		if n := len(d) + m; best < 0 || n < bestN {
			best, bestN, diffs, more, fix = i, n, d, m, f
		}
	}
	cfg := a.cfg
	e := &ReplayError{Kind: NoMatch, File: cfg.File, Fix: cfg.fix(All), Recorded: len(a.tape.Interactions)}
	if best >= 0 {
		e.Request, e.Diffs, e.More, e.Presets = best+1, diffs, more, fix
	} else {
		e.Diffs = []string{"request: " + now.Method + " " + now.Path}
	}
	return e
}

// recordedKey is the canonical key of recorded interaction i: its JSON
// body is parsed again, so that a cassette edited by hand, in any layout,
// matches as it would in order (and goes through the matching rules).
func (a *Answerer) recordedKey(i int) string {
	rq := &a.tape.Interactions[i].Request
	cb := canonBody{json: rq.JSON, bytes: rq.Body}
	if a.set != nil {
		if n := a.normalRecorded(i); n != nil {
			cb.value = n.value
			return requestKey(rq, cb)
		}
	}
	if rq.JSON {
		if v, err := value.Parse(rq.Body); err == nil {
			cb.value = v
		} else {
			cb.json = false
		}
	}
	return requestKey(rq, cb)
}

// requestKey is equal for two requests in canonical form exactly when
// compare finds no difference between them: the method, the path and
// query, the headers kept, and the body (JSON compactly, keys sorted,
// numbers by value).
func requestKey(rq *Request, cb canonBody) string {
	var b bytes.Buffer
	b.WriteString(rq.Method)
	b.WriteByte(0)
	b.WriteString(rq.Path)
	for _, k := range slices.Sorted(maps.Keys(rq.Header)) {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(rq.Header[k])
	}
	b.WriteByte(0)
	if cb.json {
		b.WriteByte('J')
		b.Write(keyForm.Append(b.AvailableBuffer(), cb.value))
	} else {
		b.WriteByte('B')
		b.Write(cb.bytes)
	}
	return b.String()
}

// keyForm writes a body in a key as value.Canonical does, with numbers by
// value (1.0 and 1 alike, as compare takes them).
var keyForm = value.Form{ByValue: true}
