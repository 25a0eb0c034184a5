package cassette

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// streams are event streams as servers send them, the odd ones included.
var streams = map[string]string{
	"anthropic": "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi \\u00e9 \\\"x\\\"\"}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	"chat": "data: {\"id\":\"c\",\"choices\":[]}\n\n" + "data: [DONE]\n\n",
	"odd": ": keep-alive\n\n" + // a comment
		"data:{\"no\":\"space\"}\n\n" + // no space after the colon
		"id: 7\ndata: x\n\n" + // an id
		"event: multi\ndata: {\"a\":\ndata: 1}\n\n" + // JSON over two data lines
		"data: two\ndata: lines\n\n" +
		"data:  {\"lead\":1} \n\n" + // whitespace around JSON
		"data: \"a JSON string\"\n\n" +
		"data: \n\n" + // empty data
		"event: bare\n\n" + // a name, no data
		"\n" + // a stray blank line
		"data: crlf\r\n\r\n" +
		"data: \xff\xfe not UTF-8\n\n" +
		"data: cut short",
}

func TestSplitEventsJoinsBack(t *testing.T) {
	for name, s := range streams {
		evs := SplitEvents([]byte(s))
		if got := string(bytes.Join(evs, nil)); got != s {
			t.Errorf("%s: joined events differ:\n%q\n%q", name, got, s)
		}
	}
	if got := SplitEvents(nil); got == nil || len(got) != 0 {
		t.Errorf("SplitEvents(nil) = %#v, want an empty list", got)
	}
	if n := len(SplitEvents([]byte(streams["odd"]))); n != 13 {
		t.Errorf("odd stream: %d events, want 13", n)
	}
}

// Every stream, however odd, comes back from the file byte for byte; the
// usual events are written as what they say.
func TestEventsRoundTripExactBytes(t *testing.T) {
	for name, s := range streams {
		c := &Cassette{Rules: RulesFor("openai"), Interactions: []Interaction{{
			Request:  Request{Method: "POST", Path: "/v1/x"},
			Response: Response{Status: 200, Header: map[string]string{"content-type": "text/event-stream"}, Events: SplitEvents([]byte(s))},
		}}}
		data := c.Marshal()
		got, err := Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, data)
		}
		rs := &got.Interactions[0].Response
		if !rs.Streamed() || string(rs.Bytes()) != s {
			t.Errorf("%s: read back %q, want %q", name, rs.Bytes(), s)
		}
		if again := got.Marshal(); !bytes.Equal(again, data) {
			t.Errorf("%s: written again differently:\n%s\n%s", name, again, data)
		}
	}
}

func TestEventsInTheFile(t *testing.T) {
	c := &Cassette{Interactions: []Interaction{{
		Request:  Request{Method: "POST", Path: "/v1/x"},
		Response: Response{Status: 200, Events: SplitEvents([]byte(streams["odd"]))},
	}}}
	want := `        "events": [
          {"raw": ": keep-alive\n\n"},
          {"raw": "data:{\"no\":\"space\"}\n\n"},
          {"raw": "id: 7\ndata: x\n\n"},
          {"event": "multi", "data": {"a":
1}},
          {"data_text": "two\nlines"},
          {"data_text": " {\"lead\":1} "},
          {"data": "a JSON string"},
          {"data_text": ""},
          {"event": "bare"},
          {"raw": "\n"},
          {"raw": "data: crlf\r\n\r\n"},
          {"raw_base64": "ZGF0YTog//4gbm90IFVURi04Cgo="},
          {"raw": "data: cut short"}
        ]
`
	if got := string(c.Marshal()); !strings.Contains(got, want) {
		t.Errorf("the file:\n%s\nwant it to hold:\n%s", got, want)
	}
	empty := &Cassette{Interactions: []Interaction{{Request: Request{Method: "POST", Path: "/"}, Response: Response{Status: 200, Events: [][]byte{}}}}}
	data := empty.Marshal()
	if !strings.Contains(string(data), "\"events\": []\n") {
		t.Errorf("an empty stream:\n%s", data)
	}
	if got, err := Unmarshal(data); err != nil || !got.Interactions[0].Response.Streamed() {
		t.Errorf("an empty stream read back: %v", err)
	}
}

func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream": true, "text/event-stream; charset=utf-8": true, "Text/Event-Stream": true,
		"application/json": false, "": false, "text/event-stream;;": true,
	} {
		if got := wire.IsEventStream(ct); got != want {
			t.Errorf("IsEventStream(%q) = %v", ct, got)
		}
	}
}
