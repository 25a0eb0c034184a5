package spec

import (
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// checkSource is how reports quote a check back to its author: its kind,
// then its value n rendered on one line in YAML flow style, keys in the
// order written. val is n's converted value, which gives each scalar its
// meaning.
func checkSource(kind CheckKind, n *yaml.Node, val any) string {
	var b strings.Builder
	b.Grow(64) // most checks
	b.WriteString(string(kind))
	b.WriteString(": ")
	writeFlow(&b, n, val, 0)
	return b.String()
}

func writeFlow(b *strings.Builder, n *yaml.Node, val any, depth int) {
	n = yamlpos.Deref(n)
	if n == nil || depth > yamlpos.MaxDepth {
		b.WriteString("null")
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		m, _ := val.(map[string]any)
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			k := yamlpos.Deref(n.Content[i]).Value
			writeScalar(b, k)
			b.WriteString(": ")
			writeFlow(b, n.Content[i+1], m[k], depth+1)
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		a, _ := val.([]any)
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteString(", ")
			}
			var ev any
			if i < len(a) {
				ev = a[i]
			}
			writeFlow(b, e, ev, depth+1)
		}
		b.WriteByte(']')
	default:
		switch v := val.(type) {
		case string:
			writeScalar(b, v)
		default:
			b.WriteString(value.Canonical(v))
		}
	}
}

// writeScalar writes a string plain when YAML would read it back as the
// same string, quoted otherwise.
func writeScalar(b *strings.Builder, s string) {
	if isPlain(s) {
		switch strings.ToLower(s) {
		case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		default:
			b.WriteString(s)
			return
		}
	}
	b.WriteString(value.Canonical(s))
}

// isPlain reports whether s matches [A-Za-z_][A-Za-z0-9_ ./-]* and does not
// end in a space: a word YAML reads as a string without quotes.
func isPlain(s string) bool {
	if s == "" || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == ' ' || c == '.' || c == '/' || c == '-'):
		default:
			return false
		}
	}
	return true
}
