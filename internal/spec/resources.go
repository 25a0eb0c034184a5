package spec

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"
	"go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// What a suite serves over MCP beside its tools: resources (fixed, and
// templated with answers per URI), prompts with arguments, and the
// completions of both. They are the suite's, the same in every case, and
// never change while served (no list_changed). Text may name a template's
// variables or a prompt's arguments as {{name}}: the read's or the get's
// value is put there.

// Resource is a resource the suite serves: a fixed URI, or a URI
// template (RFC 6570) whose reads the answers give.
type Resource struct {
	Pos         yamlpos.Pos
	URI         string // a fixed resource's; "" for a template
	Template    string // uri_template
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Content is a fixed resource's, or a template's answer when no
	// answer matches (Has false: none, the read is not found).
	Content ResourceContent
	// Answers are a template's, first match wins.
	Answers []*ResourceAnswer
	// Complete are a template variable's completion values.
	Complete map[string][]string
}

// ResourceContent is what a read gives: text (json: written as its text)
// or a blob.
type ResourceContent struct {
	Has      bool
	Text     string
	Blob     []byte // decoded; IsBlob says it is one
	IsBlob   bool
	MIMEType string // "" is the resource's
}

// ResourceAnswer answers the reads of a template whose variables have
// the values of When (each exactly).
type ResourceAnswer struct {
	Pos     yamlpos.Pos
	When    map[string]string
	Content ResourceContent
}

// Prompt is a prompt the suite serves.
type Prompt struct {
	Pos         yamlpos.Pos
	Name        string
	Title       string
	Description string
	Arguments   []*PromptArgument
	Messages    []PromptMessage
}

// PromptArgument is one of a prompt's arguments.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
	Complete    []string
}

// PromptMessage is one message of a prompt: user or assistant text.
type PromptMessage struct {
	Role string
	Text string
}

// Fill puts values into text's {{name}} places (the data files'
// placeholder, data.go); a name without a value is left empty.
func Fill(text string, values map[string]string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return placeholder().ReplaceAllStringFunc(text, func(m string) string {
		return values[strings.TrimSpace(m[2:len(m)-2])]
	})
}

// maxCompletions bounds the values of one completion list (MCP's own
// bound of one completion answer).
const maxCompletions = 100

func (x *decoder) resources(n *yaml.Node, val any) []*Resource {
	var out []*Resource
	seen := map[string]bool{}
	for _, it := range yamlpos.Items(n, val) {
		m, _ := it.Val.(map[string]any)
		r := &Resource{Pos: x.d.Pos(it.N), Name: str(m["name"]), Title: str(m["title"]), Description: str(m["description"]), MIMEType: str(m["mime_type"])}
		var keyNode *yaml.Node
		var answerNodes []*yaml.Node
		for _, p := range yamlpos.Pairs(it.N, it.Val) {
			switch p.Key() {
			case "uri":
				r.URI, keyNode = str(p.Val), p.V
			case "uri_template":
				r.Template, keyNode = str(p.Val), p.V
			case "answers":
				for _, an := range yamlpos.Items(p.V, p.Val) {
					a := &ResourceAnswer{Pos: x.d.Pos(an.N), When: map[string]string{}}
					when := yamlpos.Get(an.N, an.Val, "when")
					for _, w := range yamlpos.Pairs(when.V, when.Val) {
						a.When[w.Key()] = scalarString(w.Val)
					}
					a.Content = x.resourceContent(an.N, an.Val)
					r.Answers = append(r.Answers, a)
					answerNodes = append(answerNodes, an.N)
				}
			case "complete":
				r.Complete = map[string][]string{}
				for _, v := range yamlpos.Pairs(p.V, p.Val) {
					r.Complete[v.Key()] = x.completions(v.V, v.Val)
				}
			}
		}
		r.Content = x.resourceContent(it.N, it.Val)
		switch {
		case r.URI != "" && r.Template != "":
			x.errorf(it.N, "a resource has uri or uri_template, not both")
			continue
		case r.URI == "" && r.Template == "":
			x.errorf(it.N, "a resource needs uri (a fixed resource) or uri_template")
			continue
		}
		id := r.URI + r.Template
		if seen[id] {
			x.errorf(keyNode, "resource %q is declared twice", id)
			continue
		}
		seen[id] = true
		r.Name = cmp.Or(r.Name, id)
		if r.URI != "" {
			if !r.Content.Has {
				x.errorf(it.N, "resource %q needs its content: text, json or blob", r.URI)
			}
			if len(r.Answers) > 0 || r.Complete != nil {
				x.errorf(it.N, "resource %q has a fixed uri: answers and complete are for a uri_template", r.URI)
			}
			out = append(out, r)
			continue
		}
		t, err := uritemplate.New(r.Template)
		if err != nil {
			x.errorf(keyNode, "uri_template %q: %v", r.Template, err)
			continue
		}
		vars := t.Varnames()
		known := func(name string) bool { return slices.Contains(vars, name) }
		for i, a := range r.Answers {
			an := answerNodes[i]
			for _, k := range slices.Sorted(maps.Keys(a.When)) {
				if !known(k) {
					x.errorf(an, "answer %d of uri_template %q: when names %q, which is not one of its variables (%s)", i+1, r.Template, k, strings.Join(vars, ", "))
				}
			}
			if !a.Content.Has {
				x.errorf(an, "answer %d of uri_template %q needs its content: text, json or blob", i+1, r.Template)
			}
			x.checkPlaceholders(an, a.Content.Text, vars, fmt.Sprintf("answer %d of uri_template %q", i+1, r.Template))
		}
		x.checkPlaceholders(it.N, r.Content.Text, vars, fmt.Sprintf("uri_template %q", r.Template))
		for _, k := range slices.Sorted(maps.Keys(r.Complete)) {
			if !known(k) {
				x.errorf(it.N, "complete of uri_template %q names %q, which is not one of its variables (%s)", r.Template, k, strings.Join(vars, ", "))
			}
		}
		out = append(out, r)
	}
	return out
}

// resourceContent reads text, json or blob (one of them) from the
// mapping n.
func (x *decoder) resourceContent(n *yaml.Node, val any) ResourceContent {
	var c ResourceContent
	for _, p := range yamlpos.Pairs(n, val) {
		switch p.Key() {
		case "text":
			c.Has, c.Text = true, str(p.Val)
		case "json":
			data, err := json.Marshal(p.Val)
			if err != nil {
				x.errorf(p.V, "json: %v", err)
				continue
			}
			c.Has, c.Text, c.MIMEType = true, string(data), "application/json"
		case "blob":
			b, err := base64.StdEncoding.DecodeString(str(p.Val))
			if err != nil {
				x.errorf(p.V, "blob is not base64: %v", err)
			}
			c.Has, c.Blob, c.IsBlob = true, b, true
		case "mime_type":
			c.MIMEType = str(p.Val)
		}
	}
	return c
}

func (x *decoder) completions(n *yaml.Node, val any) []string {
	var out []string
	for _, it := range yamlpos.Items(n, val) {
		out = append(out, scalarString(it.Val))
	}
	if len(out) > maxCompletions {
		x.errorf(n, "%d completion values; at most %d (what one completion answer may hold)", len(out), maxCompletions)
		out = out[:maxCompletions]
	}
	return out
}

func (x *decoder) prompts(n *yaml.Node, val any) []*Prompt {
	var out []*Prompt
	seen := map[string]bool{}
	for _, it := range yamlpos.Items(n, val) {
		m, _ := it.Val.(map[string]any)
		pr := &Prompt{Pos: x.d.Pos(it.N), Name: str(m["name"]), Title: str(m["title"]), Description: str(m["description"])}
		_, nameNode := yamlpos.Lookup(it.N, "name")
		for _, p := range yamlpos.Pairs(it.N, it.Val) {
			switch p.Key() {
			case "arguments":
				for _, an := range yamlpos.Items(p.V, p.Val) {
					am, _ := an.Val.(map[string]any)
					a := &PromptArgument{Name: str(am["name"]), Description: str(am["description"]), Required: am["required"] == true}
					if _, cn := yamlpos.Lookup(an.N, "complete"); cn != nil {
						a.Complete = x.completions(cn, am["complete"])
					}
					if slices.ContainsFunc(pr.Arguments, func(b *PromptArgument) bool { return b.Name == a.Name }) {
						x.errorf(an.N, "argument %q is declared twice", a.Name)
						continue
					}
					pr.Arguments = append(pr.Arguments, a)
				}
			case "messages":
				for _, mn := range yamlpos.Items(p.V, p.Val) {
					mm, _ := mn.Val.(map[string]any)
					pr.Messages = append(pr.Messages, PromptMessage{Role: str(mm["role"]), Text: str(mm["text"])})
				}
			}
		}
		if pr.Name == "" {
			continue // the schema says prompt is missing required key "name"
		}
		if seen[pr.Name] {
			x.errorf(nameNode, "prompt %q is declared twice", pr.Name)
			continue
		}
		seen[pr.Name] = true
		var args []string
		for _, a := range pr.Arguments {
			args = append(args, a.Name)
		}
		for i, m := range pr.Messages {
			x.checkPlaceholders(it.N, m.Text, args, fmt.Sprintf("message %d of prompt %q", i+1, pr.Name))
		}
		out = append(out, pr)
	}
	return out
}

// checkPlaceholders refuses a {{name}} in text that names none of names.
func (x *decoder) checkPlaceholders(n *yaml.Node, text string, names []string, what string) {
	for _, m := range placeholder().FindAllString(text, -1) {
		p := strings.TrimSpace(m[2 : len(m)-2])
		if !slices.Contains(names, p) {
			list := "none"
			if len(names) > 0 {
				list = strings.Join(names, ", ")
			}
			x.errorf(n, "%s uses {{%s}}, which is not one of its names (%s)", what, p, list)
		}
	}
}

// scalarString is a scalar's text (a number or a boolean as written in
// JSON).
func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// mcpCheck decodes read, not_read and prompted: a URI or a prompt's
// name, or {uri, times} / {name, with}.
func (x *decoder) mcpCheck(c *Check, n *yaml.Node, val any) {
	if s, ok := val.(string); ok {
		if c.Kind == CheckPrompted {
			c.Prompt = s
		} else {
			c.URI = s
		}
		return
	}
	m, _ := val.(map[string]any)
	c.URI, c.Prompt = str(m["uri"]), str(m["name"])
	for _, p := range yamlpos.Pairs(n, val) {
		switch p.Key() {
		case "times":
			if i, ok := x.integer(p.V, p.Val); ok {
				c.Times = &i
			}
		case "with":
			c.PromptWith = map[string]string{}
			for _, w := range yamlpos.Pairs(p.V, p.Val) {
				c.PromptWith[w.Key()] = scalarString(w.Val)
			}
		}
	}
}
