package tool

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// Answerer answers tool calls and keeps no record of them: a case's mock
// state, a world. args is c.Args parsed, once, by the Recorder (nil, with
// perr saying why, when the text is not JSON). Implementations must be
// safe for concurrent use.
type Answerer interface {
	Answer(ctx context.Context, c Call, args any, perr error) Result
}

// Recorder is the one place a tool call is recorded, whoever makes it
// (the built-in loop, the tool server over MCP and HTTP, a drill's world
// operations): it stamps the call's turn, parses its arguments once for
// the answerer and the record, takes the call's place in the record as
// the call starts (so the record is in the order calls started in, under
// any concurrency) and fills it when the answer is back. As a Session it
// answers through the Answerer it was made with.
type Recorder struct {
	a         Answerer
	noRecords bool
	turn      func() int
	fault     Fault

	mu      sync.Mutex
	gen     uint64 // bumped by Reset
	calls   int    // calls started since the start or the last Reset
	records log
	kept    int    // bytes of arguments and results in records
	fullOf  string // "calls" or "bytes" once a bound is reached: calls are refused
	refused int    // calls refused, since the start or the last Reset
}

// MaxDepth is how deep a call's arguments kept in the record may nest:
// deeper ones are kept as their text, one string (the answerer still gets
// them parsed), so that no report indents them level by level.
const MaxDepth = 64

// MaxCalls bounds the calls a case's record keeps, MaxKept the bytes of
// their arguments and results (the text of each, as sent and answered):
// a call past either is refused (see Over).
const (
	MaxCalls = 10_000
	MaxKept  = 16 << 20
)

// Fault may answer a call instead of the answerer picked for it: how a
// fault sweep makes one call fail. Answerer gets the call's 0-based place
// in the record (the order calls started in) and returns the answerer
// of the call: a, or one that fails it. It runs under the recorder's
// lock, so it must not block.
type Fault interface {
	Answerer(i int, c Call, a Answerer) Answerer
}

// RecorderOptions shape a Recorder.
type RecorderOptions struct {
	// NoRecords keeps no record (Records returns none): a long-running
	// server sets it, or its memory grows with every call.
	NoRecords bool
	// Turn, when set, stamps each call's Turn with what it returns as the
	// call starts; unset, a call keeps the Turn it came with.
	Turn func() int
	// Calls is how many calls the record makes room for at first (a
	// scripted case knows them); 0: a few. More still fit.
	Calls int
	// Fault, when set, may fail a call in place of its answerer.
	Fault Fault
}

// NewRecorder returns a recorder that answers its calls through a (nil:
// only through CallOn).
func NewRecorder(a Answerer, o RecorderOptions) *Recorder {
	return &Recorder{a: a, noRecords: o.NoRecords, turn: o.Turn, fault: o.Fault, records: log{first: o.Calls}}
}

var _ Session = (*Recorder)(nil)

// Call answers c through the recorder's answerer and records it.
func (r *Recorder) Call(ctx context.Context, c Call) Result {
	return r.CallOn(ctx, c, func() Answerer { return r.a })
}

// CallOn answers c through the answerer pick returns and records it. pick
// runs as the call takes its place in the record, under the lock that
// Reset's also holds, so a reset falls wholly before the call (which then
// answers on what the reset made and is recorded) or after it (the call
// finishes on what it picked and is left out of the record).
func (r *Recorder) CallOn(ctx context.Context, c Call, pick func() Answerer) Result {
	args, perr := value.ParseString(c.Args)
	return r.CallParsed(ctx, c, args, perr, pick)
}

// CallParsed is CallOn of a call whose arguments its caller has parsed:
// args and perr are value.ParseString(c.Args).
func (r *Recorder) CallParsed(ctx context.Context, c Call, args any, perr error, pick func() Answerer) Result {
	if r.turn != nil {
		c.Turn = r.turn()
	}
	r.mu.Lock()
	if !r.noRecords && r.fullOf == "" {
		switch {
		case r.calls >= MaxCalls:
			r.fullOf = "calls"
		case r.kept+len(c.Args) > MaxKept:
			r.fullOf = "bytes"
		}
	}
	if r.fullOf != "" {
		res := r.refuse()
		r.mu.Unlock()
		return res
	}
	a := pick()
	if r.fault != nil {
		a = r.fault.Answerer(r.calls, c, a)
	}
	r.calls++
	gen := r.gen
	var at pos
	if !r.noRecords {
		at = r.records.reserve()
		r.kept += len(c.Args) // counted as the call starts: calls at once see each other's
	}
	r.mu.Unlock()

	res := a.Answer(ctx, c, args, perr)
	if r.noRecords {
		return res
	}
	var kept any = args
	if perr != nil || deeper(args, MaxDepth) {
		kept = c.Args
	}
	r.mu.Lock()
	if r.gen == gen {
		r.kept += len(res.Content) + len(res.Blocks)
		if res.Asked != nil {
			r.kept += len(res.Asked.Request) + len(res.Asked.Answer)
		}
		sl := r.records.at(at)
		sl.rec.Call, sl.rec.Args, sl.rec.Result, sl.done = c, kept, res, true
	}
	r.mu.Unlock()
	return res
}

// Over is why calls of the case were refused since the start or the
// last Reset (MaxCalls, MaxKept), nil when none was.
func (r *Recorder) Over() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.refused == 0:
		return nil
	case r.fullOf == "calls":
		return fmt.Errorf("the agent made more than %d tool calls in this case (tool.MaxCalls); %s past it refused", MaxCalls, count(r.refused, "call"))
	}
	return fmt.Errorf("the tool calls of this case passed %d MiB of arguments and results kept (tool.MaxKept); %s past it refused", MaxKept>>20, count(r.refused, "call"))
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// refuse answers a call past the record's bounds, under r.mu.
func (r *Recorder) refuse() Result {
	r.refused++
	msg := fmt.Sprintf("dryfire refused this call: this case has made %d tool calls, the most one case may (tool.MaxCalls)", MaxCalls)
	if r.fullOf == "bytes" {
		msg = fmt.Sprintf("dryfire refused this call: the tool calls of this case hold %d MiB of arguments and results, the most one case keeps (tool.MaxKept)", MaxKept>>20)
	}
	return Result{Content: msg, IsError: true, Outcome: Error, Entry: -1}
}

// Records returns a copy of every finished call since the start or the
// last Reset, in the order the calls started in; none with NoRecords.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Record, 0, r.records.n)
	for _, c := range r.records.chunks {
		for _, sl := range c {
			if sl.done {
				out = append(out, sl.rec)
			}
		}
	}
	return out
}

// Reset clears the record; calls still running are left out of it. also,
// when not nil, runs under the same lock as CallOn's pick: what it does
// (a scope starting its mock state over) is seen by every call that
// starts after the reset and by none that started before.
func (r *Recorder) Reset(also func()) {
	r.mu.Lock()
	r.gen++
	r.calls, r.kept, r.refused, r.fullOf = 0, 0, 0, ""
	r.records = log{first: r.records.first}
	if also != nil {
		also()
	}
	r.mu.Unlock()
}

// deeper says whether v nests more than n arrays and objects deep.
func deeper(v any, n int) bool {
	switch x := v.(type) {
	case []any:
		return n == 0 || slices.ContainsFunc(x, func(e any) bool { return deeper(e, n-1) })
	case map[string]any:
		if n == 0 {
			return true
		}
		for _, e := range x {
			if deeper(e, n-1) {
				return true
			}
		}
	}
	return false
}

// slot is one entry of the record; done is false while the call runs.
type slot struct {
	rec  Record
	done bool
}

// log is the record, in chunks: a server under load adds tens of
// thousands of calls a second, and one growing slice would copy them all
// over again at every growth. Chunks start small (a case makes a few
// calls): after the first, each is as large as all before it (so the
// record's size stays a power of two, as a doubling slice's would), up
// to maxChunk.
type log struct {
	chunks [][]slot
	n      int
	first  int // the first chunk's size; 0: 8
}

const maxChunk = 1024

// pos is where a slot is: chunk and index in it.
type pos struct{ c, i int }

// reserve appends an empty slot and returns where it is.
func (l *log) reserve() pos {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == cap(l.chunks[k-1]) {
		size := min(cmp.Or(l.first, 8), maxChunk)
		if k > 0 {
			size = min(l.n, maxChunk)
		}
		l.chunks = append(l.chunks, make([]slot, 0, size))
	}
	k := len(l.chunks) - 1
	l.chunks[k] = l.chunks[k][:len(l.chunks[k])+1] // made zero
	l.n++
	return pos{k, len(l.chunks[k]) - 1}
}

func (l *log) at(p pos) *slot { return &l.chunks[p.c][p.i] }
