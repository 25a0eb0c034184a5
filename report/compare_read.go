package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// maxReadTrials bounds a case's trials as a report is read for a
// comparison (pass^k is a product of k terms).
const maxReadTrials = 1_000_000

// ReadOutcomes reads a JSON report (`dryfire run --json`, `dryfire merge
// --json`) a case at a time, keeping only what Compare needs: a report of
// many cases is never in memory whole. Its errors say where (LINE:COL)
// when r can seek (a file).
func ReadOutcomes(r io.Reader) (*Outcomes, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	o := &Outcomes{}
	fail := func(off int64, format string, args ...any) error {
		return fmt.Errorf("%s%s", position(r, off), fmt.Sprintf(format, args...))
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(r, dec, err, "not a dryfire JSON report")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fail(0, "not a dryfire JSON report: it is not a JSON object")
	}
	sawCases := false
	suites := map[string]string{} // one string a suite file, a check's place
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(r, dec, err, "not a dryfire JSON report")
		}
		switch key, _ := tok.(string); key {
		case "cases":
			if sawCases {
				return nil, fail(dec.InputOffset(), "the report has two cases lists")
			}
			sawCases = true
			if err := readCases(r, dec, o, suites); err != nil {
				return nil, err
			}
		case "shard":
			var s struct {
				Index int `json:"index"`
				Count int `json:"count"`
			}
			if err := dec.Decode(&s); err != nil {
				return nil, jsonError(r, dec, err, "shard")
			}
			o.shardIndex, o.shardCount = s.Index, s.Count
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, jsonError(r, dec, err, "not a dryfire JSON report")
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(r, dec, err, "not a dryfire JSON report")
	}
	if !sawCases {
		return nil, errors.New("not a dryfire JSON report: it has no cases")
	}
	return o, nil
}

// outcomeJSON is what ReadOutcomes decodes of a case; the rest is skipped.
type outcomeJSON struct {
	Suite      *string        `json:"suite"`
	Name       *string        `json:"name"`
	Status     Status         `json:"status"`
	Reason     string         `json:"reason"`
	Checks     []checkOutcome `json:"checks"`
	Trials     *trialCount    `json:"trials"`
	DurationMS float64        `json:"duration_ms"`
}

func readCases(r io.Reader, dec *json.Decoder, o *Outcomes, suites map[string]string) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonError(r, dec, err, "cases")
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("%snot a dryfire JSON report: cases is not a list", position(r, dec.InputOffset()-1))
	}
	for n := 1; dec.More(); n++ {
		start := dec.InputOffset()
		var c outcomeJSON
		if err := dec.Decode(&c); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return fmt.Errorf("%scase %d: %s is %s, not what a report has there", position(r, valueStart(r, start)), n, te.Field, article(te.Value))
			}
			return jsonError(r, dec, err, fmt.Sprintf("case %d", n))
		}
		at := func() string { return position(r, valueStart(r, start)) }
		switch {
		case c.Suite == nil || c.Name == nil:
			return fmt.Errorf("%scase %d has no suite or no name: not a case of a dryfire report", at(), n)
		case c.Status != Passed && c.Status != Failed && c.Status != Errored && c.Status != Skipped:
			return fmt.Errorf("%scase %d (%q): status %q is not passed, failed, error or skipped", at(), n, *c.Name, c.Status)
		case c.Trials != nil && (c.Trials.N < 1 || c.Trials.N > maxReadTrials || c.Trials.Passed < 0 || c.Trials.Passed > c.Trials.N):
			return fmt.Errorf("%scase %d (%q): trials say %d of %d passed", at(), n, *c.Name, c.Trials.Passed, c.Trials.N)
		}
		out := caseOutcome{Suite: intern(suites, *c.Suite), Name: *c.Name, Status: c.Status, Trials: c.Trials, DurationMS: c.DurationMS}
		if c.Status != Passed {
			out.Reason = shortReason(c.Reason)
		}
		if len(c.Checks) > 0 {
			for i := range c.Checks {
				c.Checks[i].At = intern(suites, c.Checks[i].At)
			}
			out.Checks = slices.Clone(c.Checks) // no spare capacity kept per case
		}
		o.cases = append(o.cases, out)
	}
	if _, err := dec.Token(); err != nil {
		return jsonError(r, dec, err, "cases")
	}
	return nil
}

// maxInterned bounds the strings intern keeps: suite files and checks'
// FILE:LINE, which cases share.
const maxInterned = 1 << 16

// intern is s, the copy kept in seen when there is one.
func intern(seen map[string]string, s string) string {
	if t, ok := seen[s]; ok {
		return t
	}
	if len(seen) < maxInterned {
		seen[s] = s
	}
	return s
}

func article(jsonType string) string {
	switch jsonType {
	case "array", "object":
		return "an " + jsonType
	case "":
		return "a value"
	}
	return "a " + jsonType
}

// jsonError words a decoding error of the report, at its position.
func jsonError(r io.Reader, dec *json.Decoder, err error, what string) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s%s: invalid JSON: %s", position(r, syntaxAt(r, dec)), what, se.Error())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s%s: the JSON ends early (a report cut short?)", position(r, dec.InputOffset()), what)
	}
	return fmt.Errorf("%s%s: %w", position(r, dec.InputOffset()), what, err)
}

// syntaxAt is the offset of a syntax error: a Decoder's own offset is
// not the error's, so the text is read again, whole, by json.Valid's
// scanner (encoding/json's Unmarshal), which says where. This is the
// error path only.
func syntaxAt(r io.Reader, dec *json.Decoder) int64 {
	rs, ok := r.(io.ReadSeeker)
	if !ok {
		return dec.InputOffset()
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return dec.InputOffset()
	}
	data, err := io.ReadAll(rs)
	if err != nil {
		return dec.InputOffset()
	}
	var se *json.SyntaxError
	if err := json.Unmarshal(data, new(json.RawMessage)); errors.As(err, &se) && se.Offset > 0 {
		return se.Offset - 1 // one past the byte it stopped at
	}
	return dec.InputOffset()
}

// valueStart is the offset of the value after off: past white space and
// a comma.
func valueStart(r io.Reader, off int64) int64 {
	rs, ok := r.(io.ReadSeeker)
	if !ok {
		return off
	}
	if _, err := rs.Seek(off, io.SeekStart); err != nil {
		return off
	}
	br := bufio.NewReader(rs)
	for {
		b, err := br.ReadByte()
		if err != nil || b != ' ' && b != '\t' && b != '\n' && b != '\r' && b != ',' {
			return off
		}
		off++
	}
}

// position is "LINE:COL: " of byte offset off of r, read again from its
// start; empty when r cannot seek.
func position(r io.Reader, off int64) string {
	rs, ok := r.(io.ReadSeeker)
	if !ok {
		return ""
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return ""
	}
	br := bufio.NewReader(io.LimitReader(rs, off))
	line, col := 1, 1
	for {
		b, err := br.ReadByte()
		if err != nil {
			break
		}
		switch {
		case b == '\n':
			line, col = line+1, 1
		case b&0xc0 != 0x80: // a character, not the rest of one
			col++
		}
	}
	return fmt.Sprintf("%d:%d: ", line, col)
}
