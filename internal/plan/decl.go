package plan

import (
	"fmt"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// maxDeclDiffs bounds the differences listed of one tool.
const maxDeclDiffs = 8

// Diff lists how a tool as a model request offers it (or a server lists
// it) differs from its declaration t, in what t declares (a description, an
// input schema), as a diff by path: "PATH: -declared +now", a side
// missing where it lacks the place (at most maxDeclDiffs, then how many
// more). Whitespace around a description, the schema's $schema, an empty
// properties or required, and the case of a type name (Gemini writes
// OBJECT) are not differences; nor,
// in a tool offered to a model (offered), "additionalProperties": false,
// which SDKs add (the Vercel AI SDK, OpenAI's strict mode).
func (t Tool) Diff(d model.ToolDef, offered bool) []string {
	var out []string
	more := 0
	add := func(df value.Diff) bool {
		if len(out) >= maxDeclDiffs {
			more++
			return true
		}
		line := df.Path + ":"
		if df.InA {
			line += " -" + value.Truncate(value.Canonical(df.A), 60)
		}
		if df.InB {
			line += " +" + value.Truncate(value.Canonical(df.B), 60)
		}
		out = append(out, line)
		return true
	}
	if t.Description != "" && strings.TrimSpace(t.Description) != strings.TrimSpace(d.Description) {
		add(value.Diff{Path: "description", A: t.Description, B: d.Description, InA: true, InB: true})
	}
	if t.Input != nil {
		declDiff.Diffs("input_schema", schemaForm(t.Input, offered), schemaForm(d.InputSchema, offered), add)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more", more))
	}
	return out
}

var declDiff = value.Differ{Items: true}

// schemaForm is a schema as compared: without $schema, empty properties
// and required (no constraint), type names in lower case; an offered
// tool's without "additionalProperties": false.
func schemaForm(v any, offered bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "$schema" || offered && k == "additionalProperties" && e == false || empty(e) && (k == "properties" || k == "required") {
				continue
			}
			if s, ok := e.(string); ok && k == "type" {
				e = strings.ToLower(s)
			}
			out[k] = schemaForm(e, offered)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = schemaForm(e, offered)
		}
		return out
	}
	return v
}

// empty says v is {} or [].
func empty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
