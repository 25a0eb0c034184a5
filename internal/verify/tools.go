package verify

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/toolrec"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/report"
)

// Recorded is a call record-tools recorded into a suite: a rule under a
// toolrec.Origin comment, its arguments (its when) and the case it was
// recorded in ("" for dryfire serve's).
type Recorded struct {
	Tool, Case, At string
	Args           map[string]any
	rule           *spec.Rule
}

// RecordedCalls are the rules of suite s (file text data) that
// record-tools wrote, in file order by tool, the suite's then each case's.
func RecordedCalls(s *spec.Suite, data []byte) []Recorded {
	lines := strings.Split(string(data), "\n")
	var out []Recorded
	add := func(rules []*spec.Rule) {
		for _, r := range rules {
			l := r.Pos.Line - 2 // the line above the rule, 0-based
			if l < 0 || l >= len(lines) {
				continue
			}
			c, ok := strings.CutPrefix(strings.TrimSpace(lines[l]), toolrec.Origin)
			if !ok {
				continue
			}
			rc := Recorded{Tool: r.Tool, At: r.Pos.FileLine(), Args: map[string]any{}, rule: r}
			if i := strings.LastIndex(c, `, case "`); i >= 0 {
				rc.Case, _ = strconv.Unquote(c[i+len(", case "):])
			}
			if r.When != nil {
				if m, ok := r.When.Source().(map[string]any); ok {
					rc.Args = m
				}
			}
			out = append(out, rc)
		}
	}
	for _, t := range s.MockOrder {
		add(s.Mocks[t])
	}
	for k := range s.Len() {
		c := s.CaseAt(k)
		for _, t := range c.MockOrder {
			add(c.Mocks[t])
		}
	}
	return out
}

// Tools says how the real tools drifted from suite s's recording of
// them: each declaration of a tool they list (plan.Tool.Diff), each
// recorded tool they no longer list, and each recorded call's answer as
// they give it now against the suite's (error or not, shape). calls are
// RecordedCalls(s); each is sent to up once.
func Tools(ctx context.Context, up *toolrec.Upstream, s *spec.Suite, calls []Recorded) []report.Drift {
	listed := map[string]plan.Tool{}
	for _, t := range up.Tools() {
		listed[t.Name] = t
	}
	casesOf := map[string][]string{} // by tool: the cases that recorded it
	for _, c := range calls {
		if cs := casesOf[c.Tool]; len(cs) == 0 || cs[len(cs)-1] != c.Case {
			casesOf[c.Tool] = append(cs, c.Case)
		}
	}
	var out []report.Drift
	each := func(tool string, d report.Drift) {
		cs := casesOf[tool]
		if len(cs) == 0 {
			cs = []string{""}
		}
		for _, c := range cs {
			d.Case = c
			out = append(out, d)
		}
	}
	for _, t := range s.Tools {
		decl := plan.Tool{Description: t.Description, Input: t.InputSchema}
		what := fmt.Sprintf("tool %s, declared at %s", strconv.Quote(t.Name), t.Pos.FileLine())
		if l, ok := listed[t.Name]; ok {
			if diffs := decl.Diff(model.ToolDef{Description: l.Description, InputSchema: l.Input}, false); len(diffs) > 0 {
				each(t.Name, report.Drift{Suite: s.File, What: what, Differences: diffs})
			}
		} else if len(casesOf[t.Name]) > 0 {
			each(t.Name, report.Drift{Suite: s.File, What: what, Differences: []string{"the tools no longer list it"}})
		}
	}
	set := mock.Compile(s)
	byCase := map[string]*spec.Case{}
	for k := range s.Len() {
		byCase[s.CaseName(k)] = s.CaseAt(k)
	}
	for _, rc := range calls {
		if _, ok := listed[rc.Tool]; !ok {
			continue
		}
		what := fmt.Sprintf("tool %s %s, recorded at %s", strconv.Quote(rc.Tool), value.Truncate(value.Canonical(rc.Args), 60), rc.At)
		a, err := up.Call(ctx, rc.Tool, rc.Args)
		if err != nil {
			out = append(out, report.Drift{Suite: s.File, Case: rc.Case, What: what, Differences: []string{"no answer: " + err.Error()}})
			continue
		}
		rules := set
		if c := byCase[rc.Case]; c != nil {
			rules = set.ForCase(c)
		}
		was := mock.NewSession(rules, nil).Answer(ctx, tool.Call{Name: rc.Tool, Args: value.Canonical(rc.Args)}, rc.Args, nil)
		if diffs := resultDiff(was, a.Result()); len(diffs) > 0 {
			out = append(out, report.Drift{Suite: s.File, Case: rc.Case, What: what, Differences: diffs})
		}
	}
	return out
}

// resultDiff says how a tool's result now differs from the recorded one
// in kind: an error or not, text or content blocks, the shape of a JSON
// text.
func resultDiff(was, now tool.Result) []string {
	var out []string
	if was.IsError != now.IsError {
		out = append(out, fmt.Sprintf("is_error: -%t +%t", was.IsError, now.IsError))
	}
	if (was.Blocks == nil) != (now.Blocks == nil) {
		return append(out, fmt.Sprintf("content: -%s +%s", blocks(was), blocks(now)))
	}
	if was.Blocks != nil {
		w, _ := value.ParseString(string(was.Blocks))
		n, _ := value.ParseString(string(now.Blocks))
		return append(out, ShapeDiff("content", Shape(w), Shape(n))...)
	}
	return append(out, ShapeDiff("$", textShape(was.Content), textShape(now.Content))...)
}

func blocks(r tool.Result) string {
	if r.Blocks == nil {
		return "one text block"
	}
	return "content blocks"
}

// textShape is the shape of a text: its JSON value's, else "text".
func textShape(s string) any {
	if v, err := value.ParseString(s); err == nil {
		if _, isString := v.(string); !isString || strings.HasPrefix(strings.TrimSpace(s), `"`) {
			return Shape(v)
		}
	}
	return "text"
}
