package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the loader. Whatever the input, it
// must not panic, every diagnostic must have a real position and a message,
// and a load without errors must give a suite.
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob("../../examples/*/*.dryfire.yaml")
	if err != nil {
		f.Fatal(err)
	}
	more, err := filepath.Glob("testdata/invalid/*.dryfire.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range append(seeds, more...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ds := Parse("fuzz.dryfire.yaml", data, nil)
		checkInvariants(t, s, ds)
	})
}
