package cassette

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/docblock"
)

// TestDocsEvents: the events of a streamed answer are written as
// docs/cassettes.md shows them, line for line (… standing for what the
// page leaves out).
func TestDocsEvents(t *testing.T) {
	block, err := docblock.Find("../../docs/cassettes.md", `        "events": [`)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	events(&b, [][]byte{
		[]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n"),
		[]byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"),
		[]byte("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0}]}\n\n"),
		[]byte("data: [DONE]\n\n"),
		[]byte(": keep-alive\n\n"),
	})
	trim := func(s string) string { return strings.TrimSuffix(strings.TrimSpace(s), ",") }
	want := strings.Split(strings.TrimRight(block, "\n"), "\n")
	got := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines written, the page shows %d:\n%s", len(got), len(want), b.String())
	}
	for i, w := range want {
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(trim(w)), "…", ".*") + "$")
		if !re.MatchString(trim(got[i])) {
			t.Errorf("line %d: written %s, the page shows %s", i+1, trim(got[i]), trim(w))
		}
	}
}
