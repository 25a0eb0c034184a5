package world

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the world loader: it must never
// panic, and a world it accepts must start a drill and answer a call.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/invalid/*.world.yaml")
	files = append(files, "testdata/seed.world.yaml", "testdata/records.world.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	star, _ := os.ReadFile("testdata/seed.star")
	read := func(string) ([]byte, error) { return star, nil }
	f.Fuzz(func(t *testing.T, data []byte) {
		w, ds := Parse("fuzz.world.yaml", data, &LoadOptions{ReadFile: read})
		if w == nil {
			if !ds.HasErrors() {
				t.Fatal("no world and no error")
			}
			return
		}
		in, err := w.New(Drill{})
		if err != nil {
			return
		}
		for _, op := range w.OpList {
			in.Call(Request{Operation: op, Arguments: `{"id":"a","text":"b","to":"c"}`})
		}
		in.Build()
	})
}

// FuzzCall sends hostile arguments to every operation of the seed world
// (and to a name of the fuzzer's): each call answers ok or a coded error
// with an HTTP status, records one evidence entry (or more, for the
// events that came due), and never panics.
func FuzzCall(f *testing.F) {
	for _, s := range []string{`{}`, `{"id":"a","text":"b"}`, `[1]`, `{"id":1e400}`, `{"id":"` + strings.Repeat("x", 1000) + `"}`, `{"meta":{"explode":true},"id":"a","text":"b"}`, `{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, "", "\x00", `{"id":"a","id":"b"}`} {
		f.Add("record-store/records.save", s)
	}
	w := seedWorld(f)
	f.Fuzz(func(t *testing.T, op, args string) {
		in, err := w.New(Drill{})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range append([]string{op}, w.OpList...) {
			before := len(in.Evidence())
			r := in.Call(Request{Operation: name, Arguments: args})
			if r.Status != "ok" && (r.Error == nil || r.Error.Code == "") {
				t.Fatalf("%s %q: %+v", name, args, r)
			}
			if s := r.HTTPStatus(); s < 200 || s > 599 {
				t.Fatalf("status %d", s)
			}
			if after := len(in.Evidence()); after <= before {
				t.Fatalf("%s: no evidence recorded", name)
			}
		}
	})
}
