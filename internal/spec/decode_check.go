package spec

import (
	"encoding/json"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Decoding a case's checks (each kind's keys) and their regular expressions.

func (x *decoder) check(it yamlpos.Item) *Check {
	ps, mark := x.pairs(it.N, it.Val)
	defer x.done(mark)
	if len(ps) != 1 {
		return nil // reported by the schema
	}
	k, v, val := ps[0].K, ps[0].V, ps[0].Val
	c := &Check{Kind: CheckKind(yamlpos.Deref(k).Value), Pos: x.d.Pos(k)}
	switch {
	case x.cross.counted:
	case x.lateSources:
		c.srcNode, c.srcVal = v, val
	default:
		c.Source = checkSource(c.Kind, v, val)
	}
	switch c.Kind {
	case CheckCalled, CheckNotCalled:
		if s, ok := val.(string); ok {
			c.Tool, c.toolNodes = s, []*yaml.Node{v}
			return c
		}
		if _, ok := val.(map[string]any); !ok {
			return nil
		}
		var timesN, minN, maxN *yaml.Node
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "tool":
				c.Tool, c.toolNodes = str(p.Val), []*yaml.Node{p.V}
			case "operation":
				c.Operation = str(p.Val)
			case "actor":
				c.Actor = str(p.Val)
			case "outcome":
				c.Outcome = str(p.Val)
			case "where":
				c.Where = str(p.Val)
			case "with":
				if m, ok := p.Val.(map[string]any); ok {
					c.With = value.Compile(m)
					c.withNode = p.V
				}
			case "matching":
				for _, a := range yamlpos.Pairs(p.V, p.Val) {
					if src, ok := a.Val.(string); ok {
						if re := x.regex(a.V, src); re != nil {
							c.Matching = append(c.Matching, ArgMatch{Arg: a.Key(), Src: src, Re: re})
						}
					}
				}
			case "times":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Times, timesN = &i, p.K
				}
			case "min":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Min, minN = &i, p.K
				}
			case "max":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Max, maxN = &i, p.K
				}
			}
		}
		if c.Tool == "" && c.Operation == "" {
			x.errorf(k, "%s needs tool (or operation, in a world suite)", c.Kind)
		}
		if c.Tool != "" && c.Operation != "" {
			_, on := yamlpos.Lookup(v, "operation")
			x.errorf(on, "give tool or operation, not both")
		}
		if timesN != nil && (minN != nil || maxN != nil) {
			x.errorf(timesN, "times cannot be combined with min or max: use times for an exact count, min/max for a range")
		}
		if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
			x.errorf(minN, "min (%d) is greater than max (%d)", *c.Min, *c.Max)
		}
	case CheckOrder:
		for _, e := range yamlpos.Items(v, val) {
			c.Order = append(c.Order, str(e.Val))
			c.toolNodes = append(c.toolNodes, e.N)
		}
	case CheckTrajectory:
		c.TrajectoryMatch, c.TrajectoryArgs = TrajectoryStrict, ArgsSubset
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "match":
				if s, ok := p.Val.(string); ok {
					c.TrajectoryMatch = s
				}
			case "args":
				if s, ok := p.Val.(string); ok {
					c.TrajectoryArgs = s
				}
			case "where":
				c.Where = str(p.Val)
			case "calls":
				for _, e := range yamlpos.Items(p.V, p.Val) {
					tc := &TrajectoryCall{Pos: x.d.Pos(e.N)}
					switch ev := e.Val.(type) {
					case string:
						tc.Tool = ev
						c.toolNodes = append(c.toolNodes, e.N)
					case map[string]any:
						for _, q := range yamlpos.Pairs(e.N, ev) {
							switch q.Key() {
							case "tool":
								tc.Tool = str(q.Val)
								c.toolNodes = append(c.toolNodes, q.V)
							case "with":
								if m, ok := q.Val.(map[string]any); ok {
									tc.With = value.Compile(m)
								}
							}
						}
					default:
						continue // reported by the schema
					}
					c.Trajectory = append(c.Trajectory, tc)
				}
			}
		}
		if c.TrajectoryArgs == ArgsIgnore && slices.ContainsFunc(c.Trajectory, func(tc *TrajectoryCall) bool { return tc.With != nil }) {
			_, wn := yamlpos.Lookup(v, "args")
			x.warnf(wn, "args: ignore compares tool names only: the with of the calls is not used")
		}
	case CheckPolicy:
		x.policy(c, k, v, val)
	case CheckNotLeaked:
		switch t := val.(type) {
		case string:
			c.Secrets = []string{t}
		case []any:
			for _, e := range t {
				c.Secrets = append(c.Secrets, str(e))
			}
		}
	case CheckJudge:
		if m, ok := val.(map[string]any); ok {
			j := &Judge{Rubric: str(m["rubric"]), Provider: str(m["provider"]), Model: str(m["model"])}
			if num, ok := m["threshold"].(json.Number); ok {
				if f, err := num.Float64(); err == nil {
					j.Threshold = &f
				}
			}
			c.Judge, c.judgeNode = j, v
		}
	case CheckOutput:
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "contains":
				c.Contains = strPtr(p.Val)
			case "equals":
				c.Equals = strPtr(p.Val)
			case "regex":
				if s, ok := p.Val.(string); ok {
					c.Regex = x.regex(p.V, s)
				}
			case "json_schema":
				c.JSONSchema = x.compileSchema(p.V, p.Val, "json_schema")
			case "turn":
				c.turnNode = p.V
				switch t := p.Val.(type) {
				case string:
					switch t {
					case "any":
						c.Turn = TurnAny
					case "last":
					default:
						x.errorf(p.V, "turn must be a turn number (1 is the reply to input), any or last, not %q%s", t, suggest.DidYouMean(t, []string{"any", "last"}))
					}
				case json.Number:
					c.Turn, _ = x.integer(p.V, p.Val)
				}
			}
		}
	case CheckMaxTurns:
		c.MaxTurns, _ = x.integer(v, val)
	case CheckRead, CheckNotRead, CheckPrompted:
		x.mcpCheck(c, v, val)
	case CheckElicited, CheckSampled:
		x.askCheck(c, v, val)
	case CheckState:
		m, _ := val.(map[string]any)
		c.Path = str(m["path"])
		c.StateEquals, c.HasEquals = m["equals"]
		c.StateHas, c.HasContains = m["contains"]
		c.Absent, _ = m["absent"].(bool)
		given := 0
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "count":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Count = &i
				}
				given++
			case "equals", "contains", "absent":
				given++
			case "ordered":
				if b, ok := p.Val.(bool); ok {
					c.StateOrdered = &b
				}
				if _, eq := m["equals"]; !eq {
					x.errorf(p.K, "ordered says how equals compares lists; this state check has no equals")
				}
			}
		}
		if given != 1 && m != nil {
			x.errorf(k, "a state check takes exactly one of equals, contains, absent or count, not %d", given)
		}
	case CheckEvent:
		m, _ := val.(map[string]any)
		c.EventType = str(m["type"])
		if d, ok := m["data"].(map[string]any); ok {
			c.EventData = value.Compile(d)
		}
		if p := yamlpos.Get(v, val, "count"); p.V != nil {
			if i, ok := x.integer(p.V, p.Val); ok {
				c.Count = &i
			}
		}
	case CheckFile:
		x.fileCheck(c, k, v, val)
	case CheckCommand:
		x.commandCheck(c, v, val)
	case CheckNoErrors:
	default:
		return nil
	}
	return c
}

// regex compiles an output check's regex; cases that share one share its
// compiled form (a Regexp is safe for concurrent use).
// regexSize is the number of instructions of the program of regular
// expression src, as package regexp compiles it (1 when it does not): the
// work of reading one byte is at most about that many steps.
func regexSize(src string) int {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 1
	}
	return max(1, len(prog.Inst))
}

func (x *decoder) regex(n *yaml.Node, src string) *regexp.Regexp {
	if re, ok := x.regexes[src]; ok {
		return re
	}
	re, err := regexp.Compile(src)
	if err != nil {
		x.errorf(n, "invalid regex: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return nil
	}
	if x.regexes == nil {
		x.regexes = map[string]*regexp.Regexp{}
	}
	x.regexes[src] = re
	return re
}
