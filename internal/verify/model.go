package verify

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// MaxAnswer bounds an answer read from an upstream.
const MaxAnswer = 64 << 20

// Request is a recorded model call to send again: the N-th (1-based)
// interaction of a case's cassette.
type Request struct {
	N   int
	API wire.API
	Rec *cassette.Interaction
}

// What names a request: its API, method and path.
func (r Request) What() string {
	return fmt.Sprintf("%s %s %s", r.API, r.Rec.Request.Method, r.Rec.Request.Path)
}

// Requests are the model calls of a cassette, in order; those of no
// model API's route are left out.
func Requests(c *cassette.Cassette) []Request {
	var out []Request
	for i := range c.Interactions {
		it := &c.Interactions[i]
		path, _, _ := strings.Cut(it.Request.Path, "?")
		if api, ok := wire.RouteOf(path); ok {
			out = append(out, Request{N: i + 1, API: api, Rec: it})
		}
	}
	return out
}

// Call is the model call r makes again, to live's upstream of its API.
func (r Request) Call(ctx context.Context) (*model.Call, error) {
	q := r.Rec.Request
	req, err := http.NewRequestWithContext(ctx, q.Method, q.Path, bytes.NewReader(q.Body))
	if err != nil {
		return nil, err
	}
	for k, v := range q.Header {
		req.Header.Set(k, v)
	}
	if q.JSON {
		req.Header.Set("Content-Type", "application/json")
	}
	return &model.Call{Wire: r.API, HTTP: req, Body: q.Body}, nil
}

// Send sends r again through live, and says how the answer differs from
// the recorded one: its status, whether it streams, its shape (fields
// added, removed, retyped), its stop reasons, its tool calls (names and
// argument keys), a stream's sequence of events. err: no answer.
func Send(ctx context.Context, live *wire.Live, r Request) ([]string, error) {
	c, err := r.Call(ctx)
	if err != nil {
		return nil, err
	}
	a := live.Answer(c)
	if a.Err != nil {
		return nil, a.Err
	}
	if a.Live != nil {
		data, err := io.ReadAll(io.LimitReader(a.Live, MaxAnswer+1))
		a.Live.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		if len(data) > MaxAnswer {
			return nil, fmt.Errorf("the answer is over %d MiB (verify.MaxAnswer)", MaxAnswer>>20)
		}
		a.Live, a.Body = nil, data
		if a.Streamed {
			a.Events, a.Body = cassette.SplitEvents(data), nil
		}
	}
	rec := r.Rec.Response
	was := &model.Answer{Status: rec.Status, Body: rec.Body, Events: rec.Events, Streamed: rec.Streamed()}
	return Compare(r.API, was, a), nil
}

// Compare says how answer now differs from answer was, of api.
func Compare(api wire.API, was, now *model.Answer) []string {
	var out []string
	if was.Status != now.Status {
		out = append(out, fmt.Sprintf("status: -%d +%d", was.Status, now.Status))
	}
	if was.Streamed != now.Streamed {
		return append(out, fmt.Sprintf("stream: -%s +%s", streamed(was.Streamed), streamed(now.Streamed)))
	}
	wk, ws := answerShape(was)
	nk, ns := answerShape(now)
	if was.Streamed && !slices.Equal(wk, nk) {
		out = append(out, "events: -"+list(wk)+" +"+list(nk))
	}
	for _, d := range ShapeDiff("$", ws, ns) {
		out = append(out, "shape: "+d)
	}
	if w, n := stopReasons(was), stopReasons(now); !slices.Equal(w, n) {
		out = append(out, "stop reason: -"+list(w)+" +"+list(n))
	}
	if was.Status/100 == 2 && now.Status/100 == 2 {
		if w, n := toolCalls(api, was), toolCalls(api, now); !slices.Equal(w, n) {
			out = append(out, "tool calls: -"+list(w)+" +"+list(n))
		}
	}
	return out
}

func streamed(s bool) string {
	if s {
		return "an event stream"
	}
	return "a body"
}

// list is a list as "[a, b]", at most 20 items.
func list(xs []string) string {
	if len(xs) > 20 {
		xs = append(xs[:20:20], fmt.Sprintf("… %d more", len(xs)-20))
	}
	return "[" + strings.Join(xs, ", ") + "]"
}

// answerShape is an answer's shape: its body's, or the merged shape of
// its events' data, with the kinds of its events in order (repeats of a
// kind once: a real model streams as many deltas as it likes).
func answerShape(a *model.Answer) (kinds []string, shape any) {
	if !a.Streamed {
		var v any
		if err := json.Unmarshal(a.Body, &v); err != nil {
			return nil, "not JSON"
		}
		return nil, Shape(v)
	}
	for _, ev := range a.Events {
		name, hasName, data, hasData, _ := cassette.ParseEvent(ev)
		if !hasName && !hasData {
			continue
		}
		var v any
		k := name
		if json.Unmarshal([]byte(data), &v) == nil {
			s := Shape(v)
			if shape == nil {
				shape = s
			} else {
				shape = merge(shape, s)
			}
			if m, ok := v.(map[string]any); ok && k == "" {
				k, _ = m["type"].(string)
				if k == "" {
					k, _ = m["object"].(string)
				}
			}
		} else if k == "" {
			k = value.Truncate(data, 20)
		}
		k = cmp.Or(k, "data")
		if len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
	}
	return kinds, shape
}

// stopKeys name a stop reason in the APIs' answers.
var stopKeys = []string{"stop_reason", "finish_reason", "finishReason", "stopReason", "done_reason"}

// stopReasons are the stop reasons an answer states, in order, each once.
func stopReasons(a *model.Answer) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range stopKeys {
				if s, ok := x[k].(string); ok && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	bodies := [][]byte{a.Body}
	if a.Streamed {
		bodies = nil
		for _, ev := range a.Events {
			_, _, data, _, _ := cassette.ParseEvent(ev)
			bodies = append(bodies, []byte(data))
		}
	}
	for _, b := range bodies {
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
	}
	return out
}

// toolCalls are the tool calls an answer asks for, each as its name and
// its arguments' keys: "lookup_order(order_id)".
func toolCalls(api wire.API, a *model.Answer) []string {
	resp, err := api.Response(a)
	if err != nil {
		if _, ok := errors.AsType[*json.SyntaxError](err); ok {
			return []string{"(not JSON)"}
		}
		return []string{"(unreadable: " + value.Truncate(err.Error(), 60) + ")"}
	}
	var out []string
	for _, tc := range resp.ToolCalls {
		var keys []string
		if v, err := value.ParseString(tc.Args); err == nil {
			if m, ok := v.(map[string]any); ok {
				keys = slices.Sorted(maps.Keys(m))
			}
		}
		out = append(out, tc.Name+"("+strings.Join(keys, ", ")+")")
	}
	return out
}
