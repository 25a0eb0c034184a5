package hostile_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/template"
)

// expand runs an item's file through text/template when it uses {% %}.
func expand(t *testing.T, data []byte) []byte {
	if !bytes.Contains(data, []byte("{%")) {
		return data
	}
	tm, err := template.New("item").Delims("{%", "%}").Funcs(template.FuncMap{"repeat": func(n int, s string) string { return strings.Repeat(s, n) }}).Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tm.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func strconvItoa(n int) string { return strconv.Itoa(n) }

// durations are the timings reports print (1.2s, 35ms, 0.4 ms).
var durations = regexp.MustCompile(`(\(|in |within )[0-9]+(\.[0-9]+)? ?(ms|s|µs)\b`)
