package mock

import (
	"strconv"
	"strings"
)

// RenderContent is the text of a content outcome's MCP blocks for
// whatever takes text rather than MCP content: the built-in loop's model,
// HTTP tools, `dryfire call` and the report's result. Blocks are
// separated by a newline:
//
//	text                   its text, as it is
//	image, audio           [image image/png, 1,234 bytes]
//	resource with text     [resource URI, MIME], a newline, then its text
//	resource with a blob   [resource URI, MIME, 1,234 bytes]
//	resource_link          [resource_link URI, NAME, MIME]
//
// (MIME left out when the block has none.) A model is shown what there
// is and how big it is, never a wall of base64.
func RenderContent(blocks []any) string {
	var b strings.Builder
	for i, v := range blocks {
		if i > 0 {
			b.WriteByte('\n')
		}
		m, _ := v.(map[string]any)
		str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
		switch typ := str(m, "type"); typ {
		case "text":
			b.WriteString(str(m, "text"))
		case "image", "audio":
			placeholder(&b, typ, str(m, "mimeType"), size(str(m, "data")))
		case "resource":
			r, _ := m["resource"].(map[string]any)
			if blob, ok := r["blob"].(string); ok {
				placeholder(&b, "resource", str(r, "uri"), str(r, "mimeType"), size(blob))
				break
			}
			placeholder(&b, "resource", str(r, "uri"), str(r, "mimeType"))
			b.WriteByte('\n')
			b.WriteString(str(r, "text"))
		case "resource_link":
			placeholder(&b, "resource_link", str(m, "uri"), str(m, "name"), str(m, "mimeType"))
		default:
			placeholder(&b, typ)
		}
	}
	return b.String()
}

// placeholder writes [kind fact, fact, ...], leaving out empty facts.
func placeholder(b *strings.Builder, kind string, facts ...string) {
	b.WriteString("[" + kind)
	sep := " "
	for _, f := range facts {
		if f != "" {
			b.WriteString(sep + f)
			sep = ", "
		}
	}
	b.WriteString("]")
}

// size is "N bytes" for the bytes base64 text s holds (padded, no
// whitespace: the loader has made it so), N with thousands separators.
func size(s string) string {
	n := len(s) / 4 * 3
	n -= len(s) - len(strings.TrimRight(s, "="))
	unit := " bytes"
	if n == 1 {
		unit = " byte"
	}
	return thousands(n) + unit
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
