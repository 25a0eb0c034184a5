package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// askCheck judges elicited and sampled from what the calls of the tool
// asked the MCP client (a rule's elicit or sample) and what it answered:
// a request counts when the client answered it as the check says.
func askCheck(c *spec.Check, f *Facts) (bool, string) {
	method := "elicitation/create"
	if c.Kind == spec.CheckSampled {
		method = "sampling/createMessage"
	}
	n, calls := 0, 0
	var seen []string
	for i := range f.Calls {
		r := &f.Calls[i]
		if r.Name != c.Tool || c.With != nil && !c.With.Match(r.Args) {
			continue
		}
		calls++
		a := r.Result.Asked
		if a == nil || a.Method != method {
			continue
		}
		if a.Error != "" {
			seen = append(seen, "no answer ("+a.Error+")")
			continue
		}
		answer, _ := value.Parse(a.Answer)
		m, _ := answer.(map[string]any)
		seen = append(seen, describeAnswer(c.Kind, m))
		if answered(c, m) {
			n++
		}
	}
	what := askWant(c)
	if c.Times != nil && n == *c.Times || c.Times == nil && n > 0 {
		return true, fmt.Sprintf("%s: %s", what, termtext.Count(n, "time"))
	}
	var got string
	switch {
	case len(seen) > 0:
		got = "the client answered: " + strings.Join(seen, "; ")
	case calls > 0:
		got = fmt.Sprintf("no call of %s asked the client (%s)", c.Tool, termtext.Count(calls, "call"))
	default:
		got = c.Tool + " was never called"
		if c.With != nil {
			got += " with those arguments"
		}
	}
	if c.Times != nil {
		return false, fmt.Sprintf("expected %s %s; %s (%s)", what, termtext.Count(*c.Times, "time"), termtext.Count(n, "time"), got)
	}
	return false, fmt.Sprintf("expected %s; %s", what, got)
}

// answered says whether an answer m is the one check c asks for.
func answered(c *spec.Check, m map[string]any) bool {
	if c.Kind == spec.CheckElicited {
		if c.Action != "" && m["action"] != c.Action {
			return false
		}
		return c.AnswerContent == nil || m["action"] == "accept" && c.AnswerContent.Match(m["content"])
	}
	if c.Model != "" && m["model"] != c.Model {
		return false
	}
	text, _ := sampledText(m)
	return c.Contains == nil || strings.Contains(text, *c.Contains)
}

// askWant words what check c asks for.
func askWant(c *spec.Check) string {
	var b strings.Builder
	if c.Kind == spec.CheckElicited {
		b.WriteString("an elicitation during a call of ")
	} else {
		b.WriteString("a sampling request during a call of ")
	}
	b.WriteString(subject(c))
	b.WriteString(" answered")
	switch {
	case c.Kind == spec.CheckElicited && c.Action != "":
		b.WriteString(" " + c.Action)
	case c.Model != "":
		b.WriteString(" by model " + c.Model)
	}
	if c.AnswerContent != nil {
		b.WriteString(" with " + value.Canonical(c.AnswerContent.Source()))
	}
	if c.Contains != nil {
		b.WriteString(" with text containing " + strconv.Quote(*c.Contains))
	}
	return b.String()
}

// describeAnswer is an answer as a failure lists it: an elicitation's
// action and content, a sampling answer's model and text.
func describeAnswer(kind spec.CheckKind, m map[string]any) string {
	if kind == spec.CheckElicited {
		s, _ := m["action"].(string)
		if c, ok := m["content"]; ok {
			s += " " + value.Canonical(c)
		}
		return s
	}
	text, ok := sampledText(m)
	if !ok {
		text = value.Canonical(m["content"])
	}
	model, _ := m["model"].(string)
	return fmt.Sprintf("%s: %s", model, value.Truncate(strconv.Quote(text), 200))
}

// sampledText is the text of a sampling answer's content (a text block,
// or the text blocks of a list).
func sampledText(m map[string]any) (string, bool) {
	switch c := m["content"].(type) {
	case map[string]any:
		s, ok := c["text"].(string)
		return s, ok
	case []any:
		var parts []string
		for _, b := range c {
			if bm, ok := b.(map[string]any); ok {
				if s, ok := bm["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n"), len(parts) > 0
	}
	return "", false
}
