package cassette

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzUnmarshal feeds arbitrary bytes to the cassette reader: it never
// panics, and a cassette it accepts writes back to one it reads the same.
func FuzzUnmarshal(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*/cassettes/*/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"dryfire_cassette": 1, "interactions": []}`))
	f.Add([]byte(`{"dryfire_cassette": 1, "interactions": [null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Unmarshal(data)
		if err != nil {
			return
		}
		out := c.Marshal()
		if _, err := Unmarshal(out); err != nil {
			t.Fatalf("a cassette written from an accepted one does not read back: %v\n%s", err, out)
		}
	})
}
