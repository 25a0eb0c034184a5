package spec

import (
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// flow renders a node on one line in YAML flow style, keys in the order
// written: how reports quote a check back to its author.
func flow(n *yaml.Node, conv *converter) string {
	var b strings.Builder
	writeFlow(&b, n, conv, 0)
	return b.String()
}

func writeFlow(b *strings.Builder, n *yaml.Node, conv *converter, depth int) {
	n = deref(n)
	if n == nil || depth > maxDepth {
		b.WriteString("null")
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			writeScalar(b, deref(n.Content[i]).Value)
			b.WriteString(": ")
			writeFlow(b, n.Content[i+1], conv, depth+1)
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFlow(b, e, conv, depth+1)
		}
		b.WriteByte(']')
	default:
		switch v := conv.values[n].(type) {
		case string:
			writeScalar(b, v)
		default:
			b.WriteString(value.Canonical(v))
		}
	}
}

var plainScalar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ ./-]*$`)

// writeScalar writes a string plain when YAML would read it back as the
// same string, quoted otherwise.
func writeScalar(b *strings.Builder, s string) {
	if plainScalar.MatchString(s) && strings.TrimSpace(s) == s {
		switch strings.ToLower(s) {
		case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		default:
			b.WriteString(s)
			return
		}
	}
	b.WriteString(value.Canonical(s))
}
