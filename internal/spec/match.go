package spec

import (
	"errors"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/reqmatch"
)

// match reads a match block (suite, agent or case): its ignore paths and
// normalize rules, in file order. The schema has checked the shapes;
// paths and regular expressions are checked here, at their positions.
func (x *decoder) match(n *yaml.Node, val any) []reqmatch.Rule {
	var out []reqmatch.Rule
	for _, p := range pairs(n, val) {
		switch deref(p.k).Value {
		case "ignore":
			for _, it := range items(p.v, p.val) {
				s, ok := it.val.(string)
				if !ok || s == "" {
					continue // reported by the schema
				}
				if _, err := reqmatch.ParsePath(s); err != nil {
					x.pathError(it.n, s, err)
					continue
				}
				out = append(out, reqmatch.Rule{Ignore: s})
			}
		case "normalize":
			for _, it := range items(p.v, p.val) {
				if r, ok := x.normalizeRule(it); ok {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// pathError reports a JSON path that does not parse at its column.
func (x *decoder) pathError(n *yaml.Node, s string, err error) {
	var pe *reqmatch.PathError
	if !errors.As(err, &pe) {
		x.errorf(n, "invalid JSON path %q: %v", s, err)
		return
	}
	at := *deref(n)
	if at.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		at.Column++
	}
	if at.Line == deref(n).Line && at.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		at.Column += pe.Col - 1
	}
	x.errorf(&at, "invalid JSON path %q: %s", s, pe.Msg)
}

func (x *decoder) normalizeRule(it item) (reqmatch.Rule, bool) {
	n := deref(it.n)
	if n == nil || n.Kind != yaml.MappingNode {
		return reqmatch.Rule{}, false // reported by the schema
	}
	var r reqmatch.Rule
	var regexNode, replaceKey *yaml.Node
	for _, p := range pairs(n, it.val) {
		switch deref(p.k).Value {
		case "preset":
			r.Preset = str(p.val)
		case "regex":
			r.Regex, regexNode = str(p.val), p.v
		case "replace":
			r.Replace, replaceKey = str(p.val), p.k
		}
	}
	switch {
	case r.Preset != "" && r.Regex != "":
		pk, _ := lookup(n, "regex")
		x.errorf(pk, "a normalize rule has either preset or regex, not both: write each as its own \"- \" item")
		return r, false
	case r.Preset == "" && r.Regex == "":
		if _, v := lookup(n, "preset"); v != nil {
			return r, false // an unknown preset, reported by the schema
		}
		if _, v := lookup(n, "regex"); v != nil {
			return r, false
		}
		for _, p := range pairs(n, it.val) {
			if k := deref(p.k).Value; k != "replace" {
				return r, false // an unknown key, reported by the schema with a suggestion
			}
		}
		x.errorf(n, "a normalize rule needs preset (%s) or regex", strings.Join(reqmatch.Presets(), ", "))
		return r, false
	case r.Preset != "" && replaceKey != nil:
		x.errorf(replaceKey, "replace goes with regex; preset %s always writes its own placeholder", r.Preset)
		return r, false
	}
	if r.Regex != "" && x.regex(regexNode, r.Regex) == nil {
		return r, false
	}
	return r, true
}
