package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/jsonout"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// caseJSON writes a case of the JSON report as jsonout.List.Item writes it
// through encoding/json (the same bytes), field by field without
// reflection or a second pass to indent: a large run writes one per case.
// The fields few cases have (drills, trials, judges, workspaces…) are
// still encoded by encoding/json, and indented in place.
type caseJSON struct {
	b     []byte
	depth int  // of the line being written, below the list's items
	first bool // the innermost object or array has no member yet
	err   error
	raw   bytes.Buffer // a field as enc writes it
	enc   *json.Encoder
}

func newCaseJSON() *caseJSON {
	w := &caseJSON{}
	w.enc = json.NewEncoder(&w.raw)
	w.enc.SetEscapeHTML(false)
	return w
}

// itemIndent is the indentation of a list item's lines (jsonout.Indented's
// two spaces, twice: the report object and its list).
const itemIndent = "    "

// spaces holds the indentation of the deepest lines a case has.
const spaces = "                                                                "

func (w *caseJSON) indent() string {
	if n := len(itemIndent) + 2*w.depth; n <= len(spaces) {
		return spaces[:n]
	}
	return itemIndent + strings.Repeat("  ", w.depth)
}

func (w *caseJSON) newline() {
	w.b = append(w.b, '\n')
	w.b = append(w.b, w.indent()...)
}

func (w *caseJSON) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

// close ends an object or array: on a line of its own unless it is empty
// (the parent, if any, has a member now).
func (w *caseJSON) close(c byte) {
	w.depth--
	if !w.first {
		w.newline()
	}
	w.b = append(w.b, c)
	w.first = false
}

// member starts an array's next element.
func (w *caseJSON) member() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.newline()
}

// key starts an object's next field (key is plain ASCII).
func (w *caseJSON) key(k string) {
	w.member()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':', ' ')
}

func (w *caseJSON) str(k, v string) {
	w.key(k)
	w.b = value.AppendString(w.b, v)
}

func (w *caseJSON) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *caseJSON) bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// float writes v as encoding/json does (ES6 number formatting).
func (w *caseJSON) float(k string, v float64) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		w.fail()
		return
	}
	w.key(k)
	f := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		f = 'e'
	}
	w.b = strconv.AppendFloat(w.b, v, f, -1, 64)
	if n := len(w.b); f == 'e' && n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
		w.b[n-2] = w.b[n-1]
		w.b = w.b[:n-1]
	}
}

// errFallback says the case holds something only encoding/json writes
// as it should (an error included): the caller encodes it that way.
var errFallback = jsonFallback{}

type jsonFallback struct{}

func (jsonFallback) Error() string { return "encoded by encoding/json" }

func (w *caseJSON) fail() {
	if w.err == nil {
		w.err = errFallback
	}
}

// strOmit writes k unless v is empty (omitempty).
func (w *caseJSON) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

// valueIf writes k when set (omitempty).
func (w *caseJSON) valueIf(set bool, k string, v any) {
	if set {
		w.value(k, v)
	}
}

// value writes v (a pointer to a field) through encoding/json, indented
// at the current depth.
func (w *caseJSON) value(k string, v any) {
	w.key(k)
	w.raw.Reset()
	if err := w.enc.Encode(v); err != nil {
		w.fail()
		return
	}
	item := w.raw.Bytes()
	w.b = jsonout.AppendIndented(w.b, item[:len(item)-1], w.indent(), "  ")
}

// rawJSON writes a RawMessage as encoding/json does: null when nil, else
// compacted (invalid JSON is encoding/json's to report).
func (w *caseJSON) rawJSON(k string, m json.RawMessage) {
	w.key(k)
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	if !compactJSON(m) {
		w.raw.Reset()
		if err := json.Compact(&w.raw, m); err != nil {
			w.fail()
			return
		}
		m = w.raw.Bytes()
	}
	w.b = jsonout.AppendIndented(w.b, m, w.indent(), "  ")
}

func (w *caseJSON) usage(k string, i, o int) {
	w.key(k)
	w.open('{')
	w.int("input_tokens", int64(i))
	w.int("output_tokens", int64(o))
	w.close('}')
}

// appendCase appends c, at the depth of a list item, to dst.
func (w *caseJSON) appendCase(dst []byte, c *Case) ([]byte, error) {
	w.b, w.depth, w.first, w.err = dst, 0, true, nil
	w.open('{')
	w.str("suite", c.Suite)
	w.str("name", c.Name)
	w.strOmit("input", c.Input)
	w.str("status", string(c.Status))
	w.str("reason", c.Reason)
	list(w, "checks", c.Checks, w.check)
	list(w, "tool_calls", c.ToolCalls, w.toolCall)
	w.str("output", c.Output)
	w.int("turns", int64(c.Turns))
	w.usage("usage", c.Usage.InputTokens, c.Usage.OutputTokens)
	w.valueIf(c.UsageByRole != nil, "usage_by_role", c.UsageByRole)
	list(w, "notes", c.Notes, func(n *string) {
		w.member()
		w.b = value.AppendString(w.b, *n)
	})
	w.strOmit("cassette", c.Cassette)
	w.strOmit("replay", c.Replay)
	w.strOmit("stderr", c.Stderr)
	w.valueIf(len(c.ModelFaults) > 0, "model_faults", &c.ModelFaults)
	w.valueIf(len(c.Script) > 0, "script", &c.Script)
	w.valueIf(len(c.MCP) > 0, "mcp", &c.MCP)
	w.valueIf(c.Network != nil, "network", c.Network)
	w.valueIf(c.Workspace != nil, "workspace", c.Workspace)
	w.strOmit("verdict", string(c.Verdict))
	if c.Seed != nil {
		w.int("seed", *c.Seed)
	}
	w.strOmit("build_hash", c.BuildHash)
	if len(c.Build) > 0 {
		w.rawJSON("build", c.Build)
	}
	w.valueIf(len(c.InitialState) > 0, "initial_state", &c.InitialState)
	w.valueIf(len(c.State) > 0, "state", &c.State)
	w.valueIf(len(c.Evidence) > 0, "evidence", &c.Evidence)
	w.valueIf(len(c.Events) > 0, "events", &c.Events)
	w.valueIf(len(c.Conversation) > 0, "conversation", &c.Conversation)
	w.valueIf(c.Trials != nil, "trials", c.Trials)
	w.valueIf(c.Mutation != nil, "mutation", c.Mutation)
	w.float("duration_ms", c.DurationMS)
	w.close('}')
	return w.b, w.err
}

// list writes key k and xs, each member by each; a nil list is null.
func list[T any](w *caseJSON, k string, xs []T, each func(*T)) {
	w.key(k)
	if xs == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.open('[')
	for i := range xs {
		each(&xs[i])
	}
	w.close(']')
}

func (w *caseJSON) check(c *Check) {
	w.member()
	w.open('{')
	w.str("check", c.Check)
	w.str("at", c.At)
	w.bool("passed", c.Passed)
	w.str("message", c.Message)
	if c.Invariant {
		w.bool("invariant", true)
	}
	w.valueIf(c.Judge != nil, "judge", c.Judge)
	w.close('}')
}

func (w *caseJSON) toolCall(t *ToolCall) {
	w.member()
	w.open('{')
	w.int("turn", int64(t.Turn))
	w.str("id", t.ID)
	w.str("tool", t.Tool)
	w.rawJSON("args", t.Args)
	w.str("outcome", string(t.Outcome))
	w.strOmit("where", t.Where)
	w.strOmit("actor", t.Actor)
	w.str("rule", t.Rule)
	w.bool("is_error", t.IsError)
	w.str("result", t.Result)
	w.valueIf(t.NearMiss != nil, "near_miss", t.NearMiss)
	w.valueIf(t.Asked != nil, "asked", t.Asked)
	w.close('}')
}

// compactJSON says whether m is valid JSON with no space outside its
// strings: what json.Compact would return unchanged (it is then not run;
// anything else is left to it).
func compactJSON(m []byte) bool {
	if end, ok := value.ScanJSON(m, 0, 1000, nil); !ok || end != len(m) {
		return false
	}
	// Valid JSON: a backslash is in a string, and only ' ' of the spaces
	// can be (the others are controls).
	in := false
	for i := 0; i < len(m); i++ {
		switch m[i] {
		case '"':
			in = !in
		case '\\':
			i++
		case ' ', '\t', '\n', '\r':
			if !in {
				return false
			}
		}
	}
	return true
}
