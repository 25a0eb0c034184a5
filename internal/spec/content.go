package spec

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// MCP content outcomes and the notifications of a rule: what the schema
// cannot say about them (base64, media types, URIs, text or blob, values
// that increase). Shapes, required keys and keys of the wrong kind of
// block are the schema's (content_block and its per-type branches).

// contentBlocks checks the blocks of a content outcome and returns them,
// base64 fields without whitespace. Blocks the schema rejects are left
// out of the checks here (their problems are reported once, by it).
func (x *decoder) contentBlocks(n *yaml.Node, val any) []any {
	var out []any
	for _, it := range yamlpos.Items(n, val) {
		m, ok := it.Val.(map[string]any)
		if !ok {
			continue // reported by the schema
		}
		block := maps.Clone(m)
		typ, _ := m["type"].(string)
		switch typ {
		case "image", "audio":
			x.mediaType(it.N, m, typ+" block")
			if d, ok := x.base64(it.N, "data", m, typ+" block"); ok {
				block["data"] = d
			}
		case "resource":
			res, ok := m["resource"].(map[string]any)
			if !ok {
				break
			}
			rn := valueNode(it.N, "resource")
			x.uri(rn, res)
			x.mediaType(rn, res, "embedded resource")
			_, hasText := res["text"]
			_, hasBlob := res["blob"]
			switch {
			case !hasText && !hasBlob:
				x.errorf(rn, "embedded resource needs its contents: give text (a string) or blob (base64)")
			case hasText && hasBlob:
				k, _ := yamlpos.Lookup(rn, "blob")
				k = cmp.Or(k, rn)
				x.errorf(k, "embedded resource has both text and blob; keep one")
			case hasBlob:
				if d, ok := x.base64(rn, "blob", res, "embedded resource"); ok {
					cp := maps.Clone(res)
					cp["blob"] = d
					block["resource"] = cp
				}
			}
		case "resource_link":
			x.uri(it.N, m)
			x.mediaType(it.N, m, "resource_link block")
		}
		out = append(out, block)
	}
	return out
}

// valueNode is the node of the value under key in mapping n, or n when
// it cannot be found (the converted value had it: a message still needs a
// position).
func valueNode(n *yaml.Node, key string) *yaml.Node {
	if _, v := yamlpos.Lookup(n, key); v != nil {
		return v
	}
	return n
}

// base64 checks the base64 string m[key] (whitespace allowed, as a
// wrapped `base64` output pasted into a block scalar has it) and returns
// it without whitespace.
func (x *decoder) base64(n *yaml.Node, key string, m map[string]any, what string) (string, bool) {
	s, ok := m[key].(string)
	if !ok {
		return "", false // reported by the schema
	}
	vn := valueNode(n, key)
	compact := strings.Join(strings.Fields(s), "")
	if compact == "" {
		if s != "" {
			x.errorf(vn, "%s of %s must not be empty", key, what)
		}
		return "", false // an empty string is reported by the schema
	}
	if _, err := base64.StdEncoding.DecodeString(compact); err != nil {
		x.errorf(vn, "%s of %s is not base64 (standard alphabet A-Z a-z 0-9 + /, with = padding): %s", key, what, base64Problem(compact, err))
		return "", false
	}
	return compact, true
}

// base64Problem says what is wrong with s, which err says is not base64.
func base64Problem(s string, err error) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(alphabet, rune(s[i])) {
			return fmt.Sprintf("%q at offset %d is not in its alphabet", s[i], i)
		}
	}
	if len(s)%4 != 0 {
		return fmt.Sprintf("its length, %d, is not a multiple of 4 (is = padding missing?)", len(s))
	}
	var ce base64.CorruptInputError
	if errors.As(err, &ce) {
		return fmt.Sprintf("misplaced = padding at offset %d", int64(ce))
	}
	return err.Error()
}

// mediaTypeRE is a media type, type/subtype, with optional parameters.
var mediaTypeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;.*)?$`)
})

// mediaType checks m["mimeType"], when it is a string.
func (x *decoder) mediaType(n *yaml.Node, m map[string]any, what string) {
	s, ok := m["mimeType"].(string)
	if !ok || mediaTypeRE().MatchString(s) {
		return
	}
	vn := valueNode(n, "mimeType")
	x.errorf(vn, "mimeType %q of %s is not a media type: write type/subtype, such as image/png, audio/wav or application/json", s, what)
}

// uriScheme is the start of an absolute URI: its scheme and colon.
var uriScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`) })

// uri checks m["uri"], when it is a string.
func (x *decoder) uri(n *yaml.Node, m map[string]any) {
	s, ok := m["uri"].(string)
	if !ok || uriScheme().MatchString(s) {
		return
	}
	vn := valueNode(n, "uri")
	x.errorf(vn, "uri %q is not an absolute URI: it needs a scheme, such as file:///data/report.pdf or test://orders/A-991", s)
}

// logMessages reads a rule's log: strings (level info) and mappings.
func (x *decoder) logMessages(n *yaml.Node, val any) []LogMessage {
	var out []LogMessage
	for _, it := range yamlpos.Items(n, val) {
		switch e := it.Val.(type) {
		case string:
			out = append(out, LogMessage{Level: "info", Data: e})
		case map[string]any:
			data, ok := e["data"]
			if !ok {
				continue // reported by the schema
			}
			lm := LogMessage{Level: "info", Logger: str(e["logger"]), Data: data}
			if l, ok := e["level"].(string); ok {
				lm.Level = l
			}
			out = append(out, lm)
		}
	}
	return out
}

// progress reads a rule's progress values, which must increase.
func (x *decoder) progress(n *yaml.Node, val any) []float64 {
	var out []float64
	var prev json.Number
	for _, it := range yamlpos.Items(n, val) {
		num, ok := it.Val.(json.Number)
		if !ok {
			return nil // reported by the schema
		}
		f, err := num.Float64()
		if err != nil {
			return nil // out of range: reported by the converter
		}
		if len(out) > 0 && f <= out[len(out)-1] {
			x.errorf(it.N, "progress values must increase (MCP requires it): %s comes after %s", num, prev)
			return nil
		}
		out = append(out, f)
		prev = num
	}
	return out
}
