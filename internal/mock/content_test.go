package mock_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// A 1x1 red PNG (69 bytes) and 4 bytes of a WAV header.
const (
	redPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
	wav    = "UklGRg=="
)

// A content outcome: MCP gets the blocks as written (base64 compacted),
// the model and the report their text.
func TestContentOutcome(t *testing.T) {
	src := header + `mocks:
  screenshot:
    - content:                                  # r1
        - {type: text, text: "Home page:"}
        - {type: image, data: "` + redPNG + `", mimeType: image/png}
        - type: audio
          mimeType: audio/wav
          data: |
            UklG
            Rg==
        - type: resource
          resource: {uri: "test://page.json", mimeType: application/json, text: '{"title":"Home"}'}
        - type: resource
          resource: {uri: "test://page.bin", blob: AAECAwQ=}
        - {type: resource_link, uri: "test://page.html", name: page, mimeType: text/html, annotations: {audience: [user], priority: 0.5}}
        - {type: resource_link, uri: "test://other", name: other}
` + oneCase
	r := call(session(t, src, 0), "screenshot", `{}`)
	wantText := strings.Join([]string{
		"Home page:",
		"[image image/png, 69 bytes]",
		"[audio audio/wav, 4 bytes]",
		"[resource test://page.json, application/json]",
		`{"title":"Home"}`,
		"[resource test://page.bin, 5 bytes]",
		"[resource_link test://page.html, page, text/html]",
		"[resource_link test://other, other]",
	}, "\n")
	if diff := cmp.Diff(brief{wantText, false, tool.Content, ruleAt(t, src, "# r1"), -1}, short(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var blocks []map[string]any
	if err := json.Unmarshal(r.Blocks, &blocks); err != nil {
		t.Fatalf("blocks are not JSON: %v\n%s", err, r.Blocks)
	}
	want := []map[string]any{
		{"type": "text", "text": "Home page:"},
		{"type": "image", "data": redPNG, "mimeType": "image/png"},
		{"type": "audio", "data": wav, "mimeType": "audio/wav"},
		{"type": "resource", "resource": map[string]any{"uri": "test://page.json", "mimeType": "application/json", "text": `{"title":"Home"}`}},
		{"type": "resource", "resource": map[string]any{"uri": "test://page.bin", "blob": "AAECAwQ="}},
		{"type": "resource_link", "uri": "test://page.html", "name": "page", "mimeType": "text/html",
			"annotations": map[string]any{"audience": []any{"user"}, "priority": 0.5}},
		{"type": "resource_link", "uri": "test://other", "name": "other"},
	}
	if diff := cmp.Diff(want, blocks); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	if r.Notices != nil {
		t.Errorf("notices %+v, want none", r.Notices)
	}
}

// Content in a sequence, beside other outcomes; other outcomes carry no
// blocks.
func TestContentInSequence(t *testing.T) {
	src := header + `mocks:
  snap:
    - sequence:
        - error: camera busy
        - content: [{type: text, text: one}, {type: text, text: two}]
        - return: {done: true}
` + oneCase
	s := session(t, src, 0)
	var got []string
	for range 3 {
		r := call(s, "snap", `{}`)
		got = append(got, string(r.Outcome)+": "+r.Content+" "+string(r.Blocks))
	}
	want := []string{
		"error: camera busy ",
		`content: one` + "\n" + `two [{"text":"one","type":"text"},{"text":"two","type":"text"}]`,
		`return: {"done":true} `,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRenderContentSizes(t *testing.T) {
	for _, tt := range []struct {
		data, want string
	}{
		{"AA==", "[image image/png, 1 byte]"},
		{"AAA=", "[image image/png, 2 bytes]"},
		{"AAAA", "[image image/png, 3 bytes]"},
		{strings.Repeat("AAAA", 1000), "[image image/png, 3,000 bytes]"},
		{strings.Repeat("AAAA", 400000), "[image image/png, 1,200,000 bytes]"},
	} {
		got := mock.RenderContent([]any{map[string]any{"type": "image", "data": tt.data, "mimeType": "image/png"}})
		if got != tt.want {
			t.Errorf("%d base64 characters: %q, want %q", len(tt.data), got, tt.want)
		}
	}
}

// A rule's log and progress come with every result it gives, for a
// served MCP call to send.
func TestNotices(t *testing.T) {
	src := header + `mocks:
  export:
    - when: {format: csv}
      return: done
      log:
        - Export started
        - {level: warning, logger: exporter, data: {rows: 3}}
      progress: [0, 50, 100]
    - sequence: [{return: a}, {error: b}]
      progress: [1]
` + oneCase
	s := session(t, src, 0)
	r := call(s, "export", `{"format":"csv"}`)
	want := &tool.Notices{
		Log: []tool.LogMessage{
			{Level: "info", Data: []byte(`"Export started"`)},
			{Level: "warning", Logger: "exporter", Data: []byte(`{"rows":3}`)},
		},
		Progress: []float64{0, 50, 100},
	}
	if diff := cmp.Diff(want, r.Notices); diff != "" {
		t.Errorf("notices (-want +got):\n%s", diff)
	}
	for range 2 {
		r := call(s, "export", `{"format":"pdf"}`)
		if diff := cmp.Diff(&tool.Notices{Progress: []float64{1}}, r.Notices); diff != "" {
			t.Errorf("sequence rule: notices (-want +got):\n%s", diff)
		}
	}
	if r := call(s, "nothing", `{}`); r.Notices != nil || r.Blocks != nil {
		t.Errorf("unmatched call: %+v", r)
	}
}
