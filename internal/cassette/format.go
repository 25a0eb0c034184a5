package cassette

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Version is the format version this build writes and reads: the
// "dryfire_cassette" field of every file.
const Version = 1

// Cassette is the recording of one case: every model HTTP exchange, in
// order.
type Cassette struct {
	Suite string // the suite file's base name
	Case  string // the case name
	Note  string // how it was recorded and how to re-record it
	Rules []Rule // the canonicalisation rules applied to requests
	// Match are the declared matching rules the case was recorded under
	// (both requests go through them before they are compared).
	Match        []reqmatch.Rule
	Interactions []Interaction
	// User is the part of a case's model-driven user (its simulated
	// user's model calls), kept apart from the agent's interactions: nil
	// when the file has none.
	User *Part
}

// Part is a section of a cassette recorded by another caller of a model
// than the agent: its own canonicalisation rules and interactions.
type Part struct {
	Rules        []Rule
	Interactions []Interaction
}

// Section names the part of a case's cassette a Recorder replays and
// records.
type Section string

const (
	// AgentSection is the agent's interactions ("interactions").
	AgentSection Section = ""
	// UserSection is the model-driven user's ("user_rules",
	// "user_interactions").
	UserSection Section = "user"
)

// Interaction is one request and the answer it got.
type Interaction struct {
	Request  Request
	Response Response
}

// Request is a request in canonical form.
type Request struct {
	Method string
	Path   string            // path and query; never the scheme or host
	Header map[string]string // only the headers that change the answer
	// Body is the canonical JSON text when JSON is set (keys sorted; in
	// any layout, written indented), else the bytes as sent.
	Body []byte
	JSON bool
}

// Response is an answer, its body bytes exactly as received.
type Response struct {
	Status int
	Header map[string]string // content-type
	Body   []byte
	// Events, when not nil, is a streamed answer (text/event-stream): its
	// events as received, each with its closing blank line (see
	// SplitEvents); Body is then empty.
	Events [][]byte
}

// Streamed says whether the answer is an event stream.
func (r *Response) Streamed() bool { return r.Events != nil }

// Bytes is the body as received: Body, or the events joined.
func (r *Response) Bytes() []byte {
	if r.Events == nil {
		return r.Body
	}
	return bytes.Join(r.Events, nil)
}

// The file's shape. Field order on disk is fixed by Marshal, not by these
// structs, which only read.
type fileCassette struct {
	Version      *int              `json:"dryfire_cassette"`
	Suite        string            `json:"suite"`
	Case         string            `json:"case"`
	Note         string            `json:"note"`
	Rules        []Rule            `json:"rules"`
	Match        []fileMatch       `json:"match"`
	Interactions []fileInteraction `json:"interactions"`
	// The model-driven user's part: present (even empty) when recorded.
	UserRules        []Rule             `json:"user_rules"`
	UserInteractions *[]fileInteraction `json:"user_interactions"`
}

// fileMatch is one matching rule as a cassette lists it.
type fileMatch struct {
	Ignore  string `json:"ignore,omitempty"`
	Preset  string `json:"preset,omitempty"`
	Regex   string `json:"regex,omitempty"`
	Replace string `json:"replace,omitempty"`
}

type fileInteraction struct {
	Request  *fileRequest  `json:"request"`
	Response *fileResponse `json:"response"`
}

type fileBody struct {
	Body         json.RawMessage `json:"body"`
	BodyText     *string         `json:"body_text"`
	BodyBase64   *string         `json:"body_base64"`
	BodyLeading  string          `json:"body_leading"`
	BodyTrailing string          `json:"body_trailing"`
}

type fileRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	fileBody
}

type fileResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	fileBody
	// Events is a streamed answer: its event list (see events.go).
	Events json.RawMessage `json:"events"`
}

// Marshal writes the cassette as indented JSON, one field per line, keys in
// a fixed order: the same cassette always gives the same bytes.
func (c *Cassette) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"dryfire_cassette\": %d,\n", Version)
	field(&b, 1, "suite", c.Suite, true)
	field(&b, 1, "case", c.Case, true)
	field(&b, 1, "note", c.Note, true)
	writeRules(&b, "rules", c.Rules)
	b.WriteString(",\n")
	if len(c.Match) > 0 {
		b.WriteString(`  "match": [`)
		for i, m := range c.Match {
			if i > 0 {
				b.WriteString(", ")
			}
			data, _ := json.Marshal(fileMatch(m))
			v, _ := value.Parse(data)
			b.WriteString(value.Canonical(v))
		}
		b.WriteString("],\n")
	}
	writeInteractions(&b, "interactions", c.Interactions)
	if u := c.User; u != nil {
		b.WriteString(",\n")
		writeRules(&b, "user_rules", u.Rules)
		b.WriteString(",\n")
		writeInteractions(&b, "user_interactions", u.Interactions)
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

func writeRules(b *bytes.Buffer, key string, rules []Rule) {
	b.WriteString("  ")
	writeString(b, key)
	b.WriteString(": [")
	for i, r := range rules {
		if i > 0 {
			b.WriteString(", ")
		}
		writeString(b, string(r))
	}
	b.WriteByte(']')
}

// writeInteractions writes a top-level list of interactions, without the
// comma or line end after it.
func writeInteractions(b *bytes.Buffer, key string, its []Interaction) {
	b.WriteString("  ")
	writeString(b, key)
	if len(its) == 0 {
		b.WriteString(": []")
		return
	}
	b.WriteString(": [\n")
	for i, it := range its {
		b.WriteString("    {\n      \"request\": {\n")
		rq := &it.Request
		field(b, 4, "method", rq.Method, true)
		field(b, 4, "path", rq.Path, true)
		headers(b, rq.Header)
		if rq.JSON {
			b.WriteString("        \"body\": ")
			if err := json.Indent(b, rq.Body, bodyPrefix, bodyIndent); err != nil {
				panic("cassette: a canonical body is not JSON: " + err.Error())
			}
			b.WriteByte('\n')
		} else {
			body(b, 4, rq.Body)
		}
		trimComma(b)
		b.WriteString("      },\n      \"response\": {\n")
		rs := &it.Response
		fmt.Fprintf(b, "        \"status\": %d,\n", rs.Status)
		headers(b, rs.Header)
		if rs.Events != nil {
			events(b, rs.Events)
		} else {
			body(b, 4, rs.Body)
		}
		trimComma(b)
		b.WriteString("      }\n    }")
		if i < len(its)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]")
}

// trimComma drops the comma of the last field written.
func trimComma(b *bytes.Buffer) {
	if n := b.Len(); n >= 2 && b.Bytes()[n-2] == ',' {
		b.Truncate(n - 2)
		b.WriteByte('\n')
	}
}

func indent(b *bytes.Buffer, depth int) {
	for range depth {
		b.WriteString("  ")
	}
}

func field(b *bytes.Buffer, depth int, key, val string, comma bool) {
	indent(b, depth)
	writeString(b, key)
	b.WriteString(": ")
	writeString(b, val)
	if comma {
		b.WriteByte(',')
	}
	b.WriteByte('\n')
}

// headers writes an exchange's headers, keys sorted.
func headers(b *bytes.Buffer, h map[string]string) {
	b.WriteString(`        "headers": {`)
	keys := slices.Sorted(maps.Keys(h))
	for i, k := range keys {
		if i == 0 {
			b.WriteByte('\n')
		}
		field(b, 5, k, h[k], i < len(keys)-1)
	}
	if len(keys) > 0 {
		indent(b, 4)
	}
	b.WriteString("},\n")
}

// events writes a streamed answer, one event a line.
func events(b *bytes.Buffer, evs [][]byte) {
	b.WriteString(`        "events": [`)
	for i, ev := range evs {
		b.WriteString("\n          ")
		writeEvent(b, ev)
		if i < len(evs)-1 {
			b.WriteByte(',')
		}
	}
	if len(evs) > 0 {
		b.WriteString("\n        ")
	}
	b.WriteString("],\n")
}

// body writes a body so that reading it gives the same bytes back: valid
// JSON verbatim (whitespace around it in body_leading / body_trailing),
// else UTF-8 text as a string, else base64.
func body(b *bytes.Buffer, depth int, data []byte) {
	if len(data) == 0 {
		return
	}
	start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	end := len(bytes.TrimRight(data, " \t\r\n"))
	core := data[start:max(start, end)]
	switch {
	case len(core) > 0 && utf8.Valid(core) && json.Valid(core):
		indent(b, depth)
		b.WriteString(`"body": `)
		b.Write(core)
		b.WriteString(",\n")
		if start > 0 {
			field(b, depth, "body_leading", string(data[:start]), true)
		}
		if end < len(data) {
			field(b, depth, "body_trailing", string(data[end:]), true)
		}
	case utf8.Valid(data):
		field(b, depth, "body_text", string(data), true)
	default:
		field(b, depth, "body_base64", base64.StdEncoding.EncodeToString(data), true)
	}
}

// FormatError says why a file is not a cassette this build can read.
type FormatError struct {
	Msg string
}

func (e *FormatError) Error() string { return e.Msg }

// Unmarshal reads a cassette written by Marshal (or edited by hand). A
// file whose every line ends CRLF (checked out by Git on Windows) is read
// as the LF file it was written as: a body kept verbatim over several
// lines replays the recorded bytes.
func Unmarshal(data []byte) (*Cassette, error) {
	if n := bytes.Count(data, []byte("\r\n")); n > 0 && n == bytes.Count(data, []byte("\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	var f fileCassette
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, &FormatError{Msg: "not valid JSON: " + jsonProblem(data, err)}
	}
	if dec.More() {
		return nil, &FormatError{Msg: "not valid JSON: more than one value in the file"}
	}
	switch {
	case f.Version == nil:
		return nil, &FormatError{Msg: `not a dryfire cassette: it has no "dryfire_cassette" field`}
	case *f.Version > Version:
		return nil, &FormatError{Msg: fmt.Sprintf("cassette format %d is newer than this dryfire reads (%d); upgrade dryfire or re-record", *f.Version, Version)}
	case *f.Version != Version:
		return nil, &FormatError{Msg: fmt.Sprintf("unknown cassette format %d (this dryfire reads %d)", *f.Version, Version)}
	}
	c := &Cassette{Suite: f.Suite, Case: f.Case, Note: f.Note, Rules: f.Rules}
	for _, m := range f.Match {
		c.Match = append(c.Match, reqmatch.Rule(m))
	}
	var err error
	if c.Interactions, err = readInteractions(f.Interactions, "interaction"); err != nil {
		return nil, err
	}
	if f.UserInteractions != nil {
		c.User = &Part{Rules: f.UserRules}
		if c.User.Interactions, err = readInteractions(*f.UserInteractions, "user interaction"); err != nil {
			return nil, err
		}
	} else if f.UserRules != nil {
		return nil, &FormatError{Msg: `"user_rules" without "user_interactions"`}
	}
	return c, nil
}

// readInteractions reads a list of interactions; what names one in
// messages ("interaction 3").
func readInteractions(fis []fileInteraction, what string) ([]Interaction, error) {
	out := make([]Interaction, len(fis))
	for i, fi := range fis {
		where := fmt.Sprintf("%s %d", what, i+1)
		if fi.Request == nil || fi.Response == nil {
			return nil, &FormatError{Msg: where + ` needs both "request" and "response"`}
		}
		rq, rs := fi.Request, fi.Response
		if rq.Method == "" || rq.Path == "" {
			return nil, &FormatError{Msg: where + `: the request needs "method" and "path"`}
		}
		if rs.Status < 100 || rs.Status > 999 {
			return nil, &FormatError{Msg: fmt.Sprintf("%s: response status %d is not an HTTP status", where, rs.Status)}
		}
		it := &out[i]
		it.Request = Request{Method: rq.Method, Path: rq.Path, Header: rq.Headers}
		var err error
		if it.Request.Body, err = rq.bytes(); err != nil {
			return nil, &FormatError{Msg: where + ": request " + err.Error()}
		}
		if len(rq.Body) > 0 {
			// As written: a request made now is compared with it in the
			// same layout (see writeIndented), and structurally when the
			// bytes differ.
			it.Request.Body, it.Request.JSON = rq.Body, true
		}
		it.Response = Response{Status: rs.Status, Header: rs.Headers}
		if it.Response.Body, err = rs.bytes(); err != nil {
			return nil, &FormatError{Msg: where + ": response " + err.Error()}
		}
		if len(rs.Events) > 0 {
			if it.Response.Body != nil || rs.BodyLeading != "" || rs.BodyTrailing != "" {
				return nil, &FormatError{Msg: where + `: a response has "events" or a body, not both`}
			}
			if it.Response.Events, err = readEvents(rs.Events); err != nil {
				return nil, &FormatError{Msg: where + ": response " + err.Error()}
			}
		}
	}
	return out, nil
}

func (f *fileBody) bytes() ([]byte, error) {
	if len(f.Body) > 0 && (f.BodyText != nil || f.BodyBase64 != nil) || f.BodyText != nil && f.BodyBase64 != nil {
		return nil, errors.New(`has more than one of "body", "body_text", "body_base64"`)
	}
	if strings.Trim(f.BodyLeading, " \t\r\n") != "" || strings.Trim(f.BodyTrailing, " \t\r\n") != "" {
		return nil, errors.New(`"body_leading" and "body_trailing" may hold only whitespace`)
	}
	if (f.BodyLeading != "" || f.BodyTrailing != "") && len(f.Body) == 0 {
		return nil, errors.New(`has "body_leading" or "body_trailing" without "body"`)
	}
	switch {
	case len(f.Body) > 0:
		if f.BodyLeading == "" && f.BodyTrailing == "" {
			return f.Body, nil
		}
		return slices.Concat([]byte(f.BodyLeading), f.Body, []byte(f.BodyTrailing)), nil
	case f.BodyText != nil:
		return []byte(*f.BodyText), nil
	case f.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*f.BodyBase64)
		if err != nil {
			return nil, fmt.Errorf(`"body_base64" is not base64: %v`, err)
		}
		return b, nil
	}
	return nil, nil
}

// jsonProblem describes a decoding error with the line it is on.
func jsonProblem(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
		field := "the file"
		if te.Field != "" {
			field = strconv.Quote(te.Field)
		}
		msg = fmt.Sprintf("%s holds %s, want %s", field, te.Value, te.Type)
	}
	msg = strings.TrimPrefix(msg, "json: ")
	if off >= 0 && off <= int64(len(data)) {
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		return "line " + strconv.Itoa(line) + ": " + msg
	}
	return msg
}
