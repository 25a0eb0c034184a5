package runner

import (
	"cmp"
	"math"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// transcript is an agent program's tool calls in the model's order: the
// calls its answers asked for (seen, in the order they were answered, each
// answer's calls in its order), each either the call dryfire served for it
// (joined by id when the served call has one, else by tool and arguments,
// the first served not yet joined) or, when dryfire served none, the
// agent's own (Own, named as the suite knows it, its result what a later
// request sent the model back). Served calls no answer asked for (an
// agent's calls of its own accord) follow the calls of the turn they came
// in, in the order they started. names maps the names the model was
// shown to the suite's. Without seen calls the served ones are the
// transcript as they are.
func transcript(served []tool.Record, seen []model.Seen, names *tool.Names) []tool.Record {
	asked := 0
	for _, s := range seen {
		asked += len(s.Calls)
	}
	if asked == 0 {
		return served
	}
	calls, joined := join(served, seen, names, asked)
	return place(calls, served, joined)
}

// join pairs each call the answers asked for with the served call that
// ran it, if any; the others are the agent's own.
func join(served []tool.Record, seen []model.Seen, names *tool.Names, asked int) ([]tool.Record, []bool) {
	results := resultsOf(seen)
	byKey := map[string][]int{}
	byID := map[string]int{}
	for i := range served {
		r := &served[i]
		if r.Actor != "" {
			continue // the simulated user's: no answer asked for it
		}
		if r.ID != "" {
			byID[r.ID] = i
		}
		k := callKey(r.Name, value.Canonical(r.Args))
		byKey[k] = append(byKey[k], i)
	}
	joined := make([]bool, len(served))
	calls := make([]tool.Record, 0, asked)
	for _, s := range seen {
		for _, c := range s.Calls {
			name, _ := names.Suite(c.Name)
			args, perr := value.ParseString(c.Args)
			at := -1
			if i, ok := byID[c.ID]; ok && !joined[i] {
				at = i
			} else if perr == nil {
				k := callKey(name, value.Canonical(args))
				for len(byKey[k]) > 0 && at < 0 {
					if i := byKey[k][0]; !joined[i] {
						at = i
					}
					byKey[k] = byKey[k][1:]
				}
			}
			if at >= 0 {
				joined[at] = true
				r := served[at]
				r.ID = cmp.Or(r.ID, c.ID)
				r.Turn = s.Turn
				calls = append(calls, r)
				continue
			}
			var kept any = args
			if perr != nil {
				kept = c.Args
			}
			res := results.of(c.ID, c.Name)
			calls = append(calls, tool.Record{Call: tool.Call{ID: c.ID, Name: name, Args: c.Args, Turn: s.Turn}, Args: kept,
				Result: tool.Result{Content: res.Text, IsError: res.IsError, Entry: -1}, Own: true})
		}
	}
	return calls, joined
}

// place puts the served calls no answer asked for (those not joined)
// among calls: before the calls of the first turn after theirs.
func place(calls, served []tool.Record, joined []bool) []tool.Record {
	out := make([]tool.Record, 0, len(calls)+len(served))
	next := 0 // the next served call not joined, in the order calls started
	flush := func(before int) {
		for ; next < len(served); next++ {
			if joined[next] {
				continue
			}
			if served[next].Turn >= before {
				return
			}
			out = append(out, served[next])
		}
	}
	for _, c := range calls {
		flush(c.Turn)
		out = append(out, c)
	}
	flush(math.MaxInt)
	return out
}

func callKey(name, args string) string { return name + "\x00" + args }

// seenResults are the tool results the requests sent the model back, the
// first of each call: by the call's id, else (a Gemini call the answer
// gave no id) by its tool's name, in order.
type seenResults struct {
	byID   map[string]model.Message
	byName map[string][]model.Message
}

func resultsOf(seen []model.Seen) *seenResults {
	r := &seenResults{byID: map[string]model.Message{}, byName: map[string][]model.Message{}}
	for _, s := range seen {
		for _, m := range s.Results {
			if _, dup := r.byID[m.CallID]; dup {
				continue // a later request repeats the conversation
			}
			r.byID[m.CallID] = m
			r.byName[m.CallID] = append(r.byName[m.CallID], m)
		}
	}
	return r
}

func (r *seenResults) of(id, name string) model.Message {
	if m, ok := r.byID[id]; ok {
		return m
	}
	if ms := r.byName[name]; len(ms) > 0 {
		r.byName[name] = ms[1:]
		return ms[0]
	}
	return model.Message{}
}
