package cassette

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A streamed answer (Content-Type text/event-stream) is kept as its list
// of server-sent events, each the bytes of one event exactly as received,
// its closing blank line included: joined, they are the body byte for
// byte. In the file an event is written as what it says when it has the
// usual shape, and as its raw text otherwise:
//
//	{"event": "message_start", "data": {"type":"message_start",…}}
//	{"data": {"id":"chatcmpl-…","choices":[…]}}
//	{"data_text": "[DONE]"}
//	{"raw": ": keep-alive\n\n"}
//
// "event" is the event: line, "data" the data (its lines joined with a
// newline) embedded verbatim when it is JSON, else "data_text"; an event
// that the usual shape would not give back byte for byte (a comment, an
// id: or retry: field, no space after a colon, CRLF line ends, a stream
// cut mid-event) is "raw", or "raw_base64" when it is not UTF-8.

// SplitEvents cuts an event stream into its events: each ends with the
// blank line that dispatches it ("\n" or "\r\n" after a line). Bytes after
// the last blank line (a stream cut short) are one last event. Joined, the
// events are data.
func SplitEvents(data []byte) [][]byte {
	events := [][]byte{}
	start := 0
	lineStart := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '\n' {
			continue
		}
		line := data[lineStart:i]
		lineStart = i + 1
		if len(line) == 0 || len(line) == 1 && line[0] == '\r' {
			events = append(events, data[start:i+1])
			start = i + 1
		}
	}
	if start < len(data) {
		events = append(events, data[start:])
	}
	return events
}

// ParseEvent reads an event in the usual shape: an optional "event: NAME"
// line, "data: …" lines, a blank line. ok is false for anything else
// (which is kept raw).
func ParseEvent(raw []byte) (name string, hasName bool, data string, hasData bool, ok bool) {
	if !bytes.HasSuffix(raw, []byte("\n\n")) || bytes.IndexByte(raw, '\r') >= 0 {
		return "", false, "", false, false
	}
	body := raw[:len(raw)-2] // without the last line's newline and the blank line
	if len(body) == 0 {
		return "", false, "", false, false
	}
	var lines []string
	for i, line := range strings.Split(string(body), "\n") {
		switch {
		case i == 0 && strings.HasPrefix(line, "event: "):
			name, hasName = line[len("event: "):], true
		case strings.HasPrefix(line, "data: "):
			lines = append(lines, line[len("data: "):])
		default:
			return "", false, "", false, false
		}
	}
	if len(lines) > 0 {
		data, hasData = strings.Join(lines, "\n"), true
	}
	if !bytes.Equal(renderEvent(name, hasName, data, hasData), raw) {
		return "", false, "", false, false
	}
	return name, hasName, data, hasData, true
}

// renderEvent writes an event in the usual shape.
func renderEvent(name string, hasName bool, data string, hasData bool) []byte {
	var b bytes.Buffer
	if hasName {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	if hasData {
		for _, line := range strings.Split(data, "\n") {
			b.WriteString("data: ")
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// writeEvent writes one event as a one-line JSON object (see above).
func writeEvent(b *bytes.Buffer, raw []byte) {
	name, hasName, data, hasData, ok := ParseEvent(raw)
	if !ok || !utf8.ValidString(name) || !utf8.ValidString(data) {
		if utf8.Valid(raw) {
			b.WriteString(`{"raw": `)
			writeString(b, string(raw))
		} else {
			b.WriteString(`{"raw_base64": `)
			writeString(b, base64.StdEncoding.EncodeToString(raw))
		}
		b.WriteByte('}')
		return
	}
	b.WriteByte('{')
	if hasName {
		b.WriteString(`"event": `)
		writeString(b, name)
	}
	if hasData {
		if hasName {
			b.WriteString(", ")
		}
		if isJSONValue(data) {
			b.WriteString(`"data": `)
			b.WriteString(data)
		} else {
			b.WriteString(`"data_text": `)
			writeString(b, data)
		}
	}
	b.WriteByte('}')
}

// isJSONValue says whether s is one JSON value with no whitespace around
// it: such data is embedded in the file as it is, and read back the same.
func isJSONValue(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}
	return json.Valid([]byte(s))
}

// fileEvent is an event as the file holds it.
type fileEvent struct {
	Event     *string         `json:"event"`
	Data      json.RawMessage `json:"data"`
	DataText  *string         `json:"data_text"`
	Raw       *string         `json:"raw"`
	RawBase64 *string         `json:"raw_base64"`
}

// readEvents reads the "events" of a response.
func readEvents(data json.RawMessage) ([][]byte, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil || list == nil {
		return nil, errors.New(`"events" is not a list`)
	}
	events := make([][]byte, len(list))
	for i, item := range list {
		var f fileEvent
		dec := json.NewDecoder(bytes.NewReader(item))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("event %d: %s", i+1, strings.TrimPrefix(err.Error(), "json: "))
		}
		raw, err := f.bytes()
		if err != nil {
			return nil, fmt.Errorf("event %d: %v", i+1, err)
		}
		events[i] = raw
	}
	return events, nil
}

func (f *fileEvent) bytes() ([]byte, error) {
	hasData := len(f.Data) > 0 || f.DataText != nil
	if len(f.Data) > 0 && f.DataText != nil {
		return nil, errors.New(`has both "data" and "data_text"`)
	}
	if f.Raw != nil || f.RawBase64 != nil {
		if f.Raw != nil && f.RawBase64 != nil || f.Event != nil || hasData {
			return nil, errors.New(`"raw" or "raw_base64" goes alone`)
		}
		if f.Raw != nil {
			return []byte(*f.Raw), nil
		}
		b, err := base64.StdEncoding.DecodeString(*f.RawBase64)
		if err != nil {
			return nil, fmt.Errorf(`"raw_base64" is not base64: %v`, err)
		}
		return b, nil
	}
	if f.Event == nil && !hasData {
		return nil, errors.New(`needs "event", "data", "data_text", "raw" or "raw_base64"`)
	}
	var name, data string
	if f.Event != nil {
		name = *f.Event
		if strings.ContainsAny(name, "\r\n") {
			return nil, errors.New(`"event" may not hold a line break`)
		}
	}
	switch {
	case len(f.Data) > 0:
		data = string(f.Data)
	case f.DataText != nil:
		data = *f.DataText
	}
	return renderEvent(name, f.Event != nil, data, hasData), nil
}
