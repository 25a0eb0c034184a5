package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
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

// Issue 30, hole 9: an upstream echoed a key JSON-escaped (sk\u002d…),
// and it stayed in the cassette. Every form an upstream may write it in
// is redacted, and what was JSON stays JSON.
func TestRedactSeesThroughEncodings(t *testing.T) {
	const key = "sk-ant-api03-Secret_Value/42+x"
	r := New([]string{key})
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	jsonEsc := strings.NewReplacer("-", `\u002d`, "/", `\/`).Replace(key)
	for _, in := range []string{
		`{"error":"bad key ` + jsonEsc + `"}`,
		`{"error":"bad key ` + strings.Replace(key, "s", `\u0073`, 1) + `"}`,
		`{"error":"bad key ` + strings.ReplaceAll(key, "-", `\u002D`) + `"}`,
		`{"outer":"{\"inner\":\"` + strings.ReplaceAll(key, "-", `\\u002d`) + `\"}"}`,
		"https://h/x?k=" + url.QueryEscape(key),
		"https://h/x?k=" + strings.ReplaceAll(url.QueryEscape(key), "%2F", "%2f"),
		"Authorization: Basic " + b64(base64.StdEncoding, "user:"+key),
		"Authorization: Basic " + b64(base64.StdEncoding, "u:"+key),
		"Authorization: Basic " + b64(base64.StdEncoding, key),
		"token " + b64(base64.RawURLEncoding, "xy"+key+"tail"),
		"hex " + hex.EncodeToString([]byte(key)) + " and " + strings.ToUpper(hex.EncodeToString([]byte(key))),
	} {
		got := r.String(in)
		if !strings.Contains(got, Redacted) {
			t.Errorf("not redacted: %s", in)
			continue
		}
		if strings.HasPrefix(in, "{") && !json.Valid([]byte(got)) {
			t.Errorf("%s: no longer JSON: %s", in, got)
		}
		for _, leak := range []string{"Secret_Value", "Secret", "api03"} {
			var dec any
			json.Unmarshal([]byte(got), &dec)
			if strings.Contains(got, leak) || strings.Contains(fmt.Sprint(dec), leak) {
				t.Errorf("%s: %q left in %s", in, leak, got)
			}
		}
		if got := string(r.Bytes([]byte(in))); !strings.Contains(got, Redacted) {
			t.Errorf("Bytes: not redacted: %s", in)
		}
	}
	// Ordinary text stays as it is.
	for _, in := range []string{`{"a":"\u002d 100% \\ ok"}`, "QmFzaWMgdGV4dA==", "deadbeef", ""} {
		if got := r.String(in); got != in {
			t.Errorf("%q became %q", in, got)
		}
	}
}

// A query parameter is found whatever the case of its name (hole 10 of
// issue 36: ?KEY= was neither learned nor dropped), with each of its
// names, sorted.
func TestParamAnyCase(t *testing.T) {
	q, _ := url.ParseQuery("alt=sse&KEY=k-upper&key=&Key=k-mixed")
	v, names := Param(q, "key")
	if v != "k-upper" || strings.Join(names, ",") != "KEY,Key,key" {
		t.Errorf("got %q %v", v, names)
	}
	if v, names := Param(q, "token"); v != "" || names != nil {
		t.Errorf("none: got %q %v", v, names)
	}
}
