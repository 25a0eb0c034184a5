package redact

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestWalkRedactsEveryString(t *testing.T) {
	const key = "sk-secret-123456789"
	type inner struct {
		Msg  string
		Any  any
		Raw  json.RawMessage
		Tags map[string]any
	}
	v := struct {
		Name   string
		Err    *string
		Inner  []inner
		hidden string
	}{Name: "x " + key, hidden: key}
	e := "failed: " + key
	v.Err = &e
	v.Inner = []inner{{Msg: key, Any: map[string]any{"k": []any{"a " + key}}, Raw: json.RawMessage(`{"a":"` + key + `"}`), Tags: map[string]any{key: key}}}
	New([]string{key, "short"}).Walk(&v)
	out, _ := json.Marshal(v)
	want := `{"Name":"x REDACTED","Err":"failed: REDACTED","Inner":[{"Msg":"REDACTED","Any":{"k":["a REDACTED"]},"Raw":{"a":"REDACTED"},"Tags":{"REDACTED":"REDACTED"}}]}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestFromURL(t *testing.T) {
	got := FromURL("https://user:pa55word-x@host/v1?key=AIzaSecret123456&x=1")
	if len(New(got)) != 2 { // the password and the key (escaping changes neither); 1 is short
		t.Errorf("%q", got)
	}
	if s := New(got).String(`Post "https://user:pa55word-x@host/v1?key=AIzaSecret123456": dial`); s != `Post "https://user:REDACTED@host/v1?key=REDACTED": dial` {
		t.Errorf("%s", s)
	}
}

func TestWriterAndFromEnviron(t *testing.T) {
	env := []string{"OPENAI_API_KEY=sk-abcdefgh1234", "OPENAI_BASE_URL=http://u:pa55word-x@h/v1?key=qkey-0123456789", "HOME=/root"}
	var b strings.Builder
	w := Writer(&b, New(FromEnviron(env)))
	fmt.Fprintln(w, "key sk-abcdefgh1234, password pa55word-x, query qkey-0123456789, home /root")
	if got, want := b.String(), "key REDACTED, password REDACTED, query REDACTED, home /root\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if w := Writer(&b, nil); w != io.Writer(&b) {
		t.Error("a writer with no secrets is not the writer itself")
	}
}
