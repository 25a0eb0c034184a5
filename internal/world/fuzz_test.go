package world

import (
	"os"
	"path/filepath"
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
