// Package redact is dryfire's one redactor: the secrets it learns (values
// of the environment's KEY/TOKEN/SECRET/PASSWORD variables, the keys a
// client sends, credentials in a base URL) are replaced by REDACTED in
// everything dryfire writes: cassettes, reports, messages, recorded
// rules; in any of the encodings an upstream may echo them in (a JSON
// escape, a URL encoding, base64 as in an Authorization: Basic header,
// hex).
package redact

import (
	"bytes"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"
)

// Redacted replaces a secret wherever it would be written.
const Redacted = "REDACTED"

// MinLen is the shortest value treated as a secret: shorter ones would
// redact ordinary words.
const MinLen = 8

// Redactor replaces secrets, longest first.
type Redactor []string

// New is a redactor of the secrets at least MinLen long.
func New(secrets []string) Redactor {
	var r Redactor
	for _, s := range secrets {
		if len(s) >= MinLen && !slices.Contains(r, s) {
			r = append(r, s)
		}
	}
	slices.SortFunc(r, func(a, b string) int { return len(b) - len(a) })
	return r
}

// String is s with every secret replaced, in each form it can take in
// what dryfire writes (forms.go): as it is, JSON-escaped, URL-encoded,
// base64 and hex.
func (r Redactor) String(s string) string {
	for _, sec := range r {
		s = replace(s, sec)
	}
	return s
}

// Bytes is b with every secret replaced (b itself when there is none).
func (r Redactor) Bytes(b []byte) []byte {
	if len(r) == 0 {
		return b
	}
	if s := r.String(string(b)); s != string(b) {
		return []byte(s)
	}
	return b
}

// FromEnv are the values of the variables whose names hold KEY, TOKEN,
// SECRET or PASSWORD.
func FromEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < MinLen {
			continue
		}
		uk := strings.ToUpper(k)
		if slices.ContainsFunc([]string{"KEY", "TOKEN", "SECRET", "PASSWORD"}, func(w string) bool { return strings.Contains(uk, w) }) {
			out = append(out, v)
		}
	}
	return out
}

// FromURL are the credentials a URL carries: its user name and password
// and the values of its query (a key passed as ?key=...), raw and decoded.
func FromURL(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok {
		out = append(out, p, url.QueryEscape(p))
	}
	if u.User != nil {
		// A user name alone is often a token (https://TOKEN@host).
		out = append(out, u.User.Username())
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			out = append(out, v, url.QueryEscape(v))
		}
	}
	return out
}

// Param is the value of the query parameter name in q whatever the case
// of its letters there (?key=, ?KEY=, ?Key=: a client may send any, and
// each must be learned and dropped as the others), and every name it has
// in q, sorted; "" and none when q has none.
func Param(q url.Values, name string) (string, []string) {
	var names []string
	for k := range q {
		if strings.EqualFold(k, name) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	if i := slices.IndexFunc(names, func(k string) bool { return q.Get(k) != "" }); i >= 0 {
		return q.Get(names[i]), names
	}
	return "", names
}

// Walk redacts, in place, every string reachable from p (a pointer):
// fields, elements, map keys and values, and []byte as text.
func (r Redactor) Walk(p any) {
	if len(r) == 0 {
		return
	}
	r.walk(reflect.ValueOf(p), 0)
}

func (r Redactor) walk(v reflect.Value, depth int) {
	if depth > 200 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if v.Kind() == reflect.Interface {
			// The value inside an interface cannot be set in place:
			// redact a copy and put it back.
			e := v.Elem()
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			r.walk(c, depth+1)
			if v.CanSet() {
				v.Set(c)
			}
			return
		}
		r.walk(v.Elem(), depth+1)
	case reflect.String:
		if v.CanSet() {
			if s := r.String(v.String()); s != v.String() {
				v.SetString(s)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				r.walk(f, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			if v.CanSet() {
				b := v.Bytes()
				if nb := r.Bytes(b); !bytes.Equal(nb, b) {
					v.SetBytes(nb)
				}
			}
			return
		}
		for i := range v.Len() {
			r.walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			val := reflect.New(v.Type().Elem()).Elem()
			val.Set(v.MapIndex(k))
			r.walk(val, depth+1)
			nk := k
			if k.Kind() == reflect.String {
				if s := r.String(k.String()); s != k.String() {
					nk = reflect.New(k.Type()).Elem()
					nk.SetString(s)
					v.SetMapIndex(k, reflect.Value{})
				}
			}
			v.SetMapIndex(nk, val)
		}
	}
}

// Writer is w with every secret of r replaced in what is written. Each
// Write is redacted on its own, so a secret must not be split across two
// writes: dryfire's logs write whole lines.
func Writer(w io.Writer, r Redactor) io.Writer {
	if len(r) == 0 {
		return w
	}
	return &writer{w: w, r: r}
}

type writer struct {
	w io.Writer
	r Redactor
}

func (w *writer) Write(b []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// FromEnviron are the secrets of an environment: FromEnv's, and the
// credentials of the *_BASE_URL variables (FromURL).
func FromEnviron(environ []string) []string {
	out := FromEnv(environ)
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasSuffix(strings.ToUpper(k), "_BASE_URL") {
			out = append(out, FromURL(v)...)
		}
	}
	return out
}
