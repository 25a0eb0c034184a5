package redact

import (
	"strings"
	"testing"
)

// BenchmarkString is a cassette body of 16 KiB (JSON, with escapes) and
// two secrets, none in it: what each kept answer costs.
func BenchmarkString(b *testing.B) {
	body := strings.Repeat(`{"type":"text","text":"a line\nwith \"quotes\" and 100% of it\u00e9"},`, 256)
	r := New([]string{"sk-ant-api03-abcdefghijklmnop", "pa55word-secret-1"})
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r.String(body)
	}
}
