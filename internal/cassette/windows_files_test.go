package cassette

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A case named like a Windows device (NUL, con, COM1) gets a cassette
// file that is a file there too: nul.json would open the null device, so
// the write would vanish and the replay find nothing. Each path is
// written and read back, and is a file of the directory, on every OS
// (scripts/ci.d/70-wine.sh runs this on Windows semantics).
func TestCassettePathsAreFilesOnWindows(t *testing.T) {
	names := []string{"NUL", "con", "Aux", "prn", "com1", "LPT9", "com10", "aux tickets", "nul"}
	dir := t.TempDir()
	got := Paths(filepath.Join(dir, "s.dryfire.yaml"), names)
	var base []string
	for _, p := range got {
		base = append(base, strings.TrimPrefix(p, filepath.ToSlash(dir)+"/cassettes/s/"))
	}
	want := []string{
		"nul-" + nameHash("NUL") + ".json",
		"con-" + nameHash("con") + ".json",
		"aux-" + nameHash("Aux") + ".json",
		"prn-" + nameHash("prn") + ".json",
		"com1-" + nameHash("com1") + ".json",
		"lpt9-" + nameHash("LPT9") + ".json",
		"com10.json",
		"aux-tickets.json",
		"nul-" + nameHash("nul") + ".json",
	}
	if strings.Join(base, " ") != strings.Join(want, " ") {
		t.Errorf("paths\n got %q\nwant %q", base, want)
	}
	if err := os.MkdirAll(filepath.Dir(got[0]), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, p := range got {
		body := []byte(`{"case":` + `"` + names[i] + `"}`)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if back, err := os.ReadFile(p); err != nil || string(back) != string(body) {
			t.Errorf("%s read back %q, %v; want %q", p, back, err, body)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(got[0]))
	if err != nil || len(entries) != len(names) {
		t.Errorf("the cassette directory holds %d files (%v), want %d", len(entries), err, len(names))
	}
}

// A cassette checked out with CRLF line ends (Git on Windows,
// core.autocrlf) is the same recording: its verbatim bodies over several
// lines give the recorded bytes, not ones with CRs added.
func TestCRLFCassetteLoadsAsLF(t *testing.T) {
	for _, name := range []string{"sample.json", "sample-user.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		lf := strings.ReplaceAll(string(data), "\r\n", "\n")
		dir := t.TempDir()
		a, b := filepath.Join(dir, "lf.json"), filepath.Join(dir, "crlf.json")
		os.WriteFile(a, []byte(lf), 0o644)
		os.WriteFile(b, []byte(strings.ReplaceAll(lf, "\n", "\r\n")), 0o644)
		ca, err := Load(a)
		if err != nil {
			t.Fatal(err)
		}
		cb, err := Load(b)
		if err != nil {
			t.Fatalf("%s with CRLF: %v", name, err)
		}
		if diff := cmp.Diff(ca, cb); diff != "" {
			t.Errorf("%s with CRLF (-LF +CRLF):\n%s", name, diff)
		}
	}
}
