package spec

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// A rule's elicit or sample: a request the server sends the MCP client
// during each call the rule answers (elicitation/create or
// sampling/createMessage), whose answer the rule's outcome may use
// through {{elicit.…}} and {{sample.…}} placeholders.

// AskKind is what a rule asks the client.
type AskKind string

const (
	AskElicit AskKind = "elicit"
	AskSample AskKind = "sample"
)

// Ask is a rule's elicit or sample.
type Ask struct {
	Kind AskKind
	Pos  yamlpos.Pos // of the elicit or sample key

	// elicit: the message shown to the user and the requested schema (a
	// flat object; nil: no fields), its compiled form and its property
	// names; Declined is the outcome of a call whose elicitation the
	// client declines or cancels (nil: the rule's own).
	Message  string
	Schema   map[string]any
	Compiled *jschema.Schema
	Fields   []string
	Declined *Outcome

	// sample: the messages to complete, the system prompt and the bound
	// on the answer's tokens.
	Messages     []PromptMessage
	SystemPrompt string
	MaxTokens    int
}

// DefaultMaxTokens is a sample's max_tokens when the rule gives none.
const DefaultMaxTokens = 1024

// sampleVars are the names a {{sample.NAME}} placeholder may use: the
// answer's fields, as MCP names them (text is its text content).
var sampleVars = []string{"text", "model", "role", "stopReason"}

// elicitProperty are the property types MCP's requestedSchema allows.
var elicitTypes = []string{"string", "number", "integer", "boolean", "array"}

func (x *decoder) ask(p yamlpos.KV) *Ask {
	a := &Ask{Kind: AskKind(p.Key()), Pos: x.d.Pos(p.K)}
	m, ok := p.Val.(map[string]any)
	if !ok {
		return a // reported by the schema
	}
	a.Message, a.SystemPrompt = str(m["message"]), str(m["system_prompt"])
	for _, q := range yamlpos.Pairs(p.V, p.Val) {
		switch q.Key() {
		case "schema":
			a.Schema, a.Fields = x.elicitSchema(q.V, q.Val)
			if a.Schema != nil {
				a.Compiled = x.compileSchema(q.V, q.Val, "the elicit schema")
			}
		case "declined":
			a.Declined = x.declined(q)
		case "messages":
			for _, it := range yamlpos.Items(q.V, q.Val) {
				switch m := it.Val.(type) {
				case string:
					a.Messages = append(a.Messages, PromptMessage{Role: "user", Text: m})
				case map[string]any:
					a.Messages = append(a.Messages, PromptMessage{Role: str(m["role"]), Text: str(m["text"])})
				}
			}
		case "max_tokens":
			a.MaxTokens, _ = x.integer(q.V, q.Val)
		}
	}
	if a.Kind == AskSample && a.MaxTokens == 0 {
		a.MaxTokens = DefaultMaxTokens
	}
	return a
}

// elicitSchema reads an elicit's schema: a flat object whose properties
// are of the types MCP allows (string, number, integer, boolean, and an
// array of enum values), as MCP's requestedSchema must be.
func (x *decoder) elicitSchema(n *yaml.Node, val any) (map[string]any, []string) {
	m, ok := val.(map[string]any)
	if !ok {
		return nil, nil // reported by the schema
	}
	if t, ok := m["type"]; ok && t != "object" {
		_, tn := yamlpos.Lookup(n, "type")
		x.errorf(tn, "an elicit schema is an object's (MCP's requestedSchema), not type %v", t)
		return nil, nil
	}
	props, _ := m["properties"].(map[string]any)
	_, pn := yamlpos.Lookup(n, "properties")
	var fields []string
	for _, p := range yamlpos.Pairs(pn, props) {
		fields = append(fields, p.Key())
		pm, ok := p.Val.(map[string]any)
		if !ok {
			x.errorf(p.V, "elicit schema property %q must be a mapping with a type", p.Key())
			continue
		}
		t, _ := pm["type"].(string)
		if !slices.Contains(elicitTypes, t) {
			at := p.V
			if _, tn := yamlpos.Lookup(p.V, "type"); tn != nil {
				at = tn
			}
			x.errorf(at, "elicit schema property %q has type %q; MCP's requestedSchema allows %s (no nested objects)", p.Key(), t, strings.Join(elicitTypes, ", "))
		}
	}
	slices.Sort(fields)
	out := maps.Clone(m)
	out["type"] = "object"
	if props == nil {
		out["properties"] = map[string]any{}
	}
	return out, fields
}

// declined reads an elicit's declined: one outcome (return, content or
// error).
func (x *decoder) declined(q yamlpos.KV) *Outcome {
	var found []yamlpos.KV
	for _, o := range yamlpos.Pairs(q.V, q.Val) {
		switch o.Key() {
		case "return", "content", "error":
			found = append(found, o)
		}
	}
	switch len(found) {
	case 0:
		if _, ok := q.Val.(map[string]any); ok {
			x.errorf(q.K, "declined has no outcome: give one of return, content or error")
		}
		return nil
	case 1:
	default:
		x.errorf(found[1].K, "declined has %d outcomes (%s); keep one", len(found), keyNames(found))
	}
	o := x.outcome(found[0], false)
	return &o
}

// checkAsk reports what a rule's elicit or sample cannot go with, and
// every {{elicit.…}} or {{sample.…}} placeholder of its outcomes that
// names nothing the answer has; rule is the rule's node.
func (x *decoder) checkAsk(r *Rule, rule *yaml.Node, asks []yamlpos.KV) {
	if len(asks) > 1 {
		x.errorf(asks[1].K, "a rule asks the client one thing: elicit or sample, not both")
	}
	if r.Ask == nil {
		for _, o := range r.outcomes() {
			for _, name := range askPlaceholders(o) {
				kind, _, _ := strings.Cut(name, ".")
				x.errorf(o.at(rule), "{{%s}} uses the answer to %s, and this rule has no %s", name, kind, kind)
				break
			}
		}
		return
	}
	if usesImpl(r.Outcome) {
		x.errorf(asks[0].K, "%s does not go with impl: the code is given the arguments only", r.Ask.Kind)
	}
	if r.Ask.Declined != nil && r.Ask.Kind != AskElicit {
		return
	}
	for _, o := range r.outcomes() {
		for _, name := range askPlaceholders(o) {
			if msg := r.Ask.unknown(name); msg != "" {
				x.errorf(o.at(rule), "{{%s}}: %s", name, msg)
			}
		}
	}
}

// outcomes are the rule's outcomes a call may get: its own, each of its
// sequence's, and its elicit's declined.
func (r *Rule) outcomes() []Outcome {
	out := []Outcome{r.Outcome}
	out = append(out, r.Outcome.Sequence...)
	if r.Ask != nil && r.Ask.Declined != nil {
		out = append(out, *r.Ask.Declined)
	}
	return out
}

// unknown says why placeholder name names nothing in the answer to a,
// or "" when it names something.
func (a *Ask) unknown(name string) string {
	kind, rest, _ := strings.Cut(name, ".")
	if AskKind(kind) != a.Kind {
		return fmt.Sprintf("this rule asks %s, not %s", a.Kind, kind)
	}
	if a.Kind == AskSample {
		if !slices.Contains(sampleVars, rest) {
			return fmt.Sprintf("a sample's answer has %s, not %q%s", strings.Join(sampleVars, ", "), rest, suggest.DidYouMean(rest, sampleVars))
		}
		return ""
	}
	if rest == "action" || rest == "content" {
		return ""
	}
	field, ok := strings.CutPrefix(rest, "content.")
	if !ok {
		return fmt.Sprintf("an elicitation's answer has action, content and content.FIELD, not %q", rest)
	}
	if !slices.Contains(a.Fields, field) {
		if len(a.Fields) == 0 {
			return fmt.Sprintf("the elicit schema has no properties, so no field %q", field)
		}
		return fmt.Sprintf("the elicit schema has no property %q%s (its properties: %s)", field, suggest.DidYouMean(field, a.Fields), strings.Join(a.Fields, ", "))
	}
	return ""
}

// at is where o is written, or rule when that is not known.
func (o Outcome) at(rule *yaml.Node) *yaml.Node { return cmp.Or(o.node, rule) }

// IsAskPlaceholder says whether a {{name}} placeholder is an answer's,
// which a data file's row does not fill.
func IsAskPlaceholder(name string) bool {
	return strings.HasPrefix(name, "elicit.") || strings.HasPrefix(name, "sample.")
}

// askPlaceholders are the answer placeholders of an outcome's strings, in
// order.
func askPlaceholders(o Outcome) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, m := range placeholder().FindAllStringSubmatch(v, -1) {
				if IsAskPlaceholder(m[1]) {
					out = append(out, m[1])
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	switch o.Kind {
	case Return:
		walk(o.Value)
	case Content:
		walk(o.Blocks)
	case Fail:
		walk(o.Message)
	}
	return out
}

// AskVars are the values of an answer's placeholders: for an
// elicitation, elicit.action, elicit.content and elicit.content.FIELD
// for each field of the accepted content; for a sampling request,
// sample.text (its text content), sample.model, sample.role and
// sample.stopReason. answer is the client's result, decoded.
func AskVars(kind AskKind, answer map[string]any) map[string]any {
	vars := map[string]any{}
	if kind == AskElicit {
		vars["elicit.action"] = answer["action"]
		if c, ok := answer["content"].(map[string]any); ok {
			vars["elicit.content"] = c
			for k, v := range c {
				vars["elicit.content."+k] = v
			}
		}
		return vars
	}
	if c, ok := answer["content"].(map[string]any); ok {
		vars["sample.text"] = c["text"]
	}
	for _, k := range sampleVars[1:] {
		vars["sample."+k] = answer[k]
	}
	return vars
}

// FillAsk is v with the answer placeholders of its strings filled from
// vars (AskVars). With typed, a string that is one placeholder and
// nothing else takes the value with its type (null when the answer has
// none), as a data file's does; otherwise, and inside a longer string,
// a value is its text (JSON for what is not a string; nothing for none).
// Other placeholders stay as they are. Keys are not filled.
func FillAsk(v any, vars map[string]any, typed bool) any {
	return value.Map(v, func(v any) any {
		s, ok := v.(string)
		if !ok || !strings.Contains(s, "{{") {
			return v
		}
		if typed {
			ms := placeholder().FindAllStringSubmatchIndex(s, -1)
			if len(ms) == 1 && ms[0][0] == 0 && ms[0][1] == len(s) && IsAskPlaceholder(s[ms[0][2]:ms[0][3]]) {
				return vars[s[ms[0][2]:ms[0][3]]]
			}
		}
		return FillAskText(s, vars)
	})
}

// FillAskText is text with its answer placeholders replaced by their
// values' text.
func FillAskText(text string, vars map[string]any) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return placeholder().ReplaceAllStringFunc(text, func(m string) string {
		name := strings.TrimSpace(m[2 : len(m)-2])
		if !IsAskPlaceholder(name) {
			return m
		}
		return scalarString(vars[name])
	})
}

// askCheck decodes an elicited or sampled check: a tool name, or {tool,
// with, action, content, times} / {tool, with, contains, model, times}.
func (x *decoder) askCheck(c *Check, n *yaml.Node, val any) {
	if s, ok := val.(string); ok {
		c.Tool, c.toolNodes = s, []*yaml.Node{n}
		return
	}
	m, _ := val.(map[string]any)
	c.Action, c.Contains, c.Model = str(m["action"]), strPtr(m["contains"]), str(m["model"])
	if cm, ok := m["content"].(map[string]any); ok {
		c.AnswerContent = value.Compile(cm)
	}
	for _, p := range yamlpos.Pairs(n, val) {
		switch p.Key() {
		case "tool":
			c.Tool, c.toolNodes = str(p.Val), []*yaml.Node{p.V}
		case "with":
			if m, ok := p.Val.(map[string]any); ok {
				c.With = value.Compile(m)
				c.withNode = p.V
			}
		case "times":
			if i, ok := x.integer(p.V, p.Val); ok {
				c.Times = &i
			}
		}
	}
}
