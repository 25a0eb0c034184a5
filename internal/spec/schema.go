package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/jsonschema/kind"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/schema"
)

var suiteSchema = sync.OnceValues(func() (*yamlpos.FormatSchema, error) {
	raw, err := value.Parse(schema.Suite)
	if err != nil {
		return nil, fmt.Errorf("parsing the embedded suite schema: %w", err)
	}
	s := jschema.Embedded(raw, schema.SuiteURL, "")
	return yamlpos.Compiled(s, raw, schemaContexts, suiteWording), nil
})

// The suite schema in two parts, for a loader that checks one case at a
// time: the suite with its cases' items unchecked (still a list, not
// empty), and one case.
var splitSchemas = sync.OnceValues(func() ([2]*yamlpos.FormatSchema, error) {
	ss, err := suiteSchema()
	if err != nil {
		return [2]*yamlpos.FormatSchema{}, err
	}
	top, _ := ss.Raw().(map[string]any)
	props, _ := top["properties"].(map[string]any)
	cases, _ := props["cases"].(map[string]any)
	if cases == nil {
		return [2]*yamlpos.FormatSchema{}, fmt.Errorf("the embedded suite schema has no cases")
	}
	head := maps.Clone(top)
	head["properties"] = maps.Clone(props)
	c := maps.Clone(cases)
	c["items"] = map[string]any{}
	head["properties"].(map[string]any)["cases"] = c
	hs := jschema.Embedded(head, schema.SuiteURL, "")
	cs := jschema.Embedded(ss.Raw(), schema.SuiteURL, "#/$defs/case")
	return [2]*yamlpos.FormatSchema{
		yamlpos.Compiled(hs, ss.Raw(), schemaContexts, suiteWording),
		yamlpos.Compiled(cs, ss.Raw(), schemaContexts, suiteWording),
	}, nil
})

// Where in the schema an error arose, and what to call that place.
var schemaContexts = []yamlpos.SchemaContext{
	{Prefix: "/$defs/check/properties/output", Label: "output check"},
	{Prefix: "/$defs/check/properties/judge", Label: "judge check"},
	{Prefix: "/$defs/check/properties/trajectory", Label: "trajectory check"},
	{Prefix: "/$defs/check/properties/policy", Label: "policy check"},
	{Prefix: "/$defs/call_selector", Label: "policy's calls"},
	{Prefix: "/$defs/check/properties/elicited", Label: "elicited check"},
	{Prefix: "/$defs/check/properties/sampled", Label: "sampled check"},
	{Prefix: "/$defs/call_match", Label: "called check"},
	{Prefix: "/$defs/call_filter", Label: "not_called check"},
	{Prefix: "/$defs/sequence_entry", Label: "sequence entry"},
	{Prefix: "/$defs/content_block/allOf/0/then", Label: "text block"},
	{Prefix: "/$defs/content_block/allOf/1/then", Label: "image block"},
	{Prefix: "/$defs/content_block/allOf/2/then", Label: "audio block"},
	{Prefix: "/$defs/content_block/allOf/3/then", Label: "resource block"},
	{Prefix: "/$defs/content_block/allOf/4/then", Label: "resource_link block"},
	{Prefix: "/$defs/content_block", Label: "content block"},
	{Prefix: "/$defs/embedded_resource", Label: "embedded resource"},
	{Prefix: "/$defs/annotations", Label: "annotations"},
	{Prefix: "/$defs/log_message", Label: "log message"},
	{Prefix: "/$defs/elicit", Label: "elicit"},
	{Prefix: "/$defs/declined", Label: "declined"},
	{Prefix: "/$defs/sample", Label: "sample"},
	{Prefix: "/$defs/tool_call", Label: "tool call"},
	{Prefix: "/$defs/normalize_rule", Label: "normalize rule"},
	{Prefix: "/$defs/match", Label: "match"},
	{Prefix: "/$defs/clock", Label: "clock"},
	{Prefix: "/$defs/model_fault", Label: "model fault"},
	{Prefix: "/$defs/agent", Label: "agent"},
	{Prefix: "/$defs/target", Label: "target"},
	{Prefix: "/$defs/tool", Label: "tool"},
	{Prefix: "/$defs/rule", Label: "mock rule"},
	{Prefix: "/$defs/case/properties/user/items", Label: "user turn"},
	{Prefix: "/$defs/case/properties/user", Label: "user"},
	{Prefix: "/$defs/case", Label: "case"},
	{Prefix: "/$defs/guard", Label: "script guard (when)"},
	{Prefix: "/$defs/turn", Label: "script turn"},
	{Prefix: "/$defs/file_check", Label: "file check"},
	{Prefix: "/$defs/check", Label: "check"},
	{Prefix: "/$defs/prompt/properties/arguments/items", Label: "prompt argument"},
	{Prefix: "/$defs/prompt/properties/messages/items", Label: "prompt message"},
	{Prefix: "/$defs/prompt", Label: "prompt"},
	{Prefix: "/properties/injections/properties/payloads/items", Label: "payload"},
	{Prefix: "/properties/injections", Label: "injections"},
	{Prefix: "", Label: "suite"},
}

// suiteWording words the failures of the suite's own parts: checks,
// sequence entries, rule lists, the tools under tools and mocks.
var suiteWording = &yamlpos.Wording{Name: fieldName, Message: suiteMessage}

// suiteMessage words a failure the suite's way, or gives "".
func suiteMessage(f yamlpos.Failure) string {
	path := f.Path
	lastIndex := len(path) > 0 && yamlpos.IsIndex(path[len(path)-1])
	switch f.Kind.(type) {
	case *kind.AdditionalProperties:
		p := f.Property
		switch {
		case f.Label == "check":
			return fmt.Sprintf("unknown check %q%s; checks are %s", p, suggest.DidYouMean(p, f.Allowed), strings.Join(CheckKinds, ", "))
		case f.Label == "sequence entry" && (p == "when" || p == "sequence" || p == "timeout_s" || p == "delay_ms" || p == "log" || p == "progress"):
			return fmt.Sprintf("a sequence entry is an outcome (return, content, error or impl); %q belongs on the rule, not on an entry", p)
		}
	case *kind.Type:
		switch {
		case f.Label == "check" && f.Got == nil && lastIndex:
			return "empty check: give one of " + strings.Join(CheckKinds, ", ")
		case f.Label == "sequence entry" && lastIndex:
			return "a sequence entry must be an outcome mapping such as {return: ...} or {error: ...}, not " + yamlpos.Describe(f.Got)
		case isRuleList(path):
			hint := ""
			if _, ok := f.Got.(map[string]any); ok {
				hint = ` (start each rule with "- ")`
			}
			return fmt.Sprintf("%s must be a list of rules, not %s%s", f.Name, yamlpos.Describe(f.Got), hint)
		}
	case *kind.Const:
		if f.Name == "no_errors" {
			return fmt.Sprintf("no_errors takes only true, not %s; remove the check to allow tool errors", yamlpos.Describe(f.Got))
		}
	case *kind.MinProperties:
		if f.Label == "output check" {
			return "empty output check: give contains, regex, equals or json_schema"
		}
		if f.Label == "policy check" {
			return f.Name + " must not be empty"
		}
		if f.Label == "script guard (when)" {
			return "empty when: give tools, tool_result, user or matches (or remove when: the turn then answers any request)"
		}
		return "empty check: give one of " + strings.Join(CheckKinds, ", ")
	case *kind.MaxProperties:
		m, _ := f.Got.(map[string]any)
		keys := slices.Sorted(maps.Keys(m))
		return fmt.Sprintf("one check per list entry; this one has %d (%s): write each as its own \"- \" item", len(keys), strings.Join(keys, ", "))
	}
	return ""
}

// isRuleList reports whether path leads to a tool's rule list under mocks.
func isRuleList(path []string) bool {
	return len(path) == 2 && path[0] == "mocks" ||
		len(path) == 4 && path[0] == "cases" && path[2] == "mocks"
}

// fieldName names a tool's entry under tools or mocks with its parent
// (mocks.lookup, mocks.lookup[0]): the tool name alone says nothing.
// Other values are named generically ("").
func fieldName(path []string) string {
	if len(path) == 0 {
		return ""
	}
	last := path[len(path)-1]
	t := -1
	switch {
	case len(path) >= 2 && (path[0] == "tools" || path[0] == "mocks"):
		t = 1
	case len(path) >= 4 && path[0] == "cases" && path[2] == "mocks":
		t = 3
	}
	if t > 0 {
		name := path[t-1] + value.PathKey(path[t])
		switch {
		case t == len(path)-1:
			return name
		case t == len(path)-2 && path[t-1] == "mocks" && yamlpos.IsIndex(last):
			return name + "[" + last + "]"
		}
	}
	return ""
}
