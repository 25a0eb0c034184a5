package cassette

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/safeio"
)

// canSymlink skips t where symlinks cannot be made, or do not resolve
// (Windows without the privilege; Wine).
func canSymlink(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644)
	if err := os.Symlink(filepath.Join(dir, "probe"), filepath.Join(dir, "link")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "link")); err != nil {
		t.Skipf("symlinks do not resolve here: %v", err)
	}
}

// A cassette whose path is a symlink to nothing inside the project is
// written in the link's place, never through it.
func TestSaveDoesNotWriteThroughADanglingSymlink(t *testing.T) {
	canSymlink(t)
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, "cassettes", "support"), 0o755)
	api := newEcho(t)
	cfg := config(project, Once, http.DefaultTransport)
	if err := os.Symlink(filepath.Join(project, "elsewhere.json"), cfg.File); err != nil {
		t.Fatal(err)
	}
	record(t, cfg, api.URL+"/v1/chat/completions", requests[:1])
	if _, err := os.Lstat(filepath.Join(project, "elsewhere.json")); err == nil {
		t.Error("the cassette was written through the symlink")
	}
	if fi, err := os.Lstat(cfg.File); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("cassette %v, %v; want a regular file in the link's place", fi, err)
	}
}

// A cassette whose path leads out of the project root through a symlink
// (the cassettes directory, the suite's directory in it, the file
// itself; to something or to nothing; relative or absolute) is refused
// by Open in every mode, naming the link and its target, before anything
// is read or written: in mode none a cassette outside was replayed, in
// mode all one was written outside, and a cassettes directory that was a
// link to nothing failed only after the live calls, with "mkdir
// cassettes: file exists".
func TestOpenRefusesACassetteOutsideTheProject(t *testing.T) {
	canSymlink(t)
	api := newEcho(t)
	links := []struct {
		name, at, target string // at: in the project; target: "OUT/…" is absolute, in outside
		exists           bool   // the target exists, holding the case's cassette
	}{
		{"cassettes to a directory", "cassettes", "../outside/cassettes", true},
		{"cassettes to nothing", "cassettes", "../outside/cassettes", false},
		{"cassettes to nothing, absolute", "cassettes", "OUT/cassettes", false},
		{"the suite's directory", "cassettes/support", "../../outside/cassettes/support", true},
		{"the file", "cassettes/support/refund.json", "OUT/cassettes/support/refund.json", true},
		{"the file, to nothing", "cassettes/support/refund.json", "../../../outside/cassettes/support/refund.json", false},
	}
	for _, l := range links {
		for _, mode := range []Mode{None, Once, New, All} {
			t.Run(l.name+"/"+string(mode), func(t *testing.T) {
				dir := t.TempDir()
				project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
				os.MkdirAll(filepath.Join(project, filepath.Dir(l.at)), 0o755)
				os.MkdirAll(outside, 0o755)
				theirs := filepath.Join(outside, "cassettes", "support", "refund.json")
				var was []byte
				if l.exists {
					record(t, config(outside, Once, http.DefaultTransport), api.URL+"/v1/chat/completions", requests[:1])
					was, _ = os.ReadFile(theirs)
				}
				target := l.target
				if rest, ok := strings.CutPrefix(target, "OUT/"); ok {
					target = filepath.Join(outside, rest)
				}
				if err := os.Symlink(target, filepath.Join(project, l.at)); err != nil {
					t.Fatal(err)
				}
				r, err := open(config(project, mode, http.DefaultTransport))
				var pe *PathError
				if !errors.As(err, &pe) || !errors.Is(err, safeio.ErrOutside) {
					if r != nil {
						call(t, r, api.URL+"/v1/chat/completions", requests[0])
						r.Save()
					}
					t.Fatalf("Open: %v; want it refused as outside the project root", err)
				}
				want := `: the symlink "` + l.at + `" -> "` + filepath.ToSlash(target) + `" leads outside it, to "`
				if msg := err.Error(); !strings.Contains(filepath.ToSlash(msg), want) || !strings.HasSuffix(msg, "; cassettes stay inside the project root (give --root DIR to widen it)") {
					t.Errorf("the error\n  %s\ndoes not say\n  %s", msg, want)
				}
				if now, err := os.ReadFile(theirs); l.exists && string(now) != string(was) || !l.exists && err == nil {
					t.Errorf("the cassette outside changed")
				}
				if !l.exists {
					if _, err := os.Lstat(filepath.Join(outside, "cassettes")); err == nil {
						t.Errorf("a directory was made outside the project")
					}
				}
			})
		}
	}
}

// A symlink made between Open and Save (by the agent program) is not
// written through: Save checks the path again.
func TestSaveRefusesALinkMadeAfterOpen(t *testing.T) {
	canSymlink(t)
	api := newEcho(t)
	dir := t.TempDir()
	project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	os.MkdirAll(project, 0o755)
	os.MkdirAll(filepath.Join(outside, "cassettes"), 0o755)
	r := mustOpen(t, config(project, Once, http.DefaultTransport))
	if _, _, err := call(t, r, api.URL+"/v1/chat/completions", requests[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "cassettes"), filepath.Join(project, "cassettes")); err != nil {
		t.Fatal(err)
	}
	wrote, err := r.Save()
	if wrote || !errors.Is(err, safeio.ErrOutside) {
		t.Fatalf("Save: %v, %v; want it refused as outside the project root", wrote, err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "cassettes", "support")); err == nil {
		t.Error("Save wrote outside the project")
	}
}

// A cassettes directory that is a symlink staying inside the project
// (relative or absolute) is recorded into and replayed from as a
// directory is; one to nothing is refused by Open, naming the link and
// its target, and nothing is made.
func TestCassettesLinkedInsideTheProject(t *testing.T) {
	canSymlink(t)
	api := newEcho(t)
	for _, abs := range []bool{false, true} {
		project := t.TempDir()
		target := "store"
		if abs {
			target = filepath.Join(project, "store")
		}
		if err := os.Symlink(target, filepath.Join(project, "cassettes")); err != nil {
			t.Fatal(err)
		}
		_, err := Open(config(project, Once, http.DefaultTransport), false)
		var pe *PathError
		want := `the symlink "` + filepath.ToSlash(filepath.Join(project, "cassettes")) + `" -> "` + filepath.ToSlash(target) + `" leads to nothing, so no cassette can be written there: make the directory it names, or remove the link`
		if !errors.As(err, &pe) || errors.Is(err, safeio.ErrOutside) || !strings.HasSuffix(filepath.ToSlash(err.Error()), want) {
			t.Errorf("Open through a link to nothing: %v\nwant an error ending %s", err, want)
		}
		if _, err := os.Lstat(filepath.Join(project, "store")); err == nil {
			t.Error("Open made the link's target")
		}

		os.Mkdir(filepath.Join(project, "store"), 0o755)
		cfg := config(project, Once, http.DefaultTransport)
		answers := record(t, cfg, api.URL+"/v1/chat/completions", requests[:1])
		if _, err := os.Stat(filepath.Join(project, "store", "support", "refund.json")); err != nil {
			t.Fatalf("not recorded through the link: %v", err)
		}
		r := mustOpen(t, config(project, None, nil))
		if _, data, err := call(t, r, api.URL+"/v1/chat/completions", requests[0]); err != nil || string(data) != string(answers[0]) {
			t.Errorf("replayed through the link: %q, %v; want %q", data, err, answers[0])
		}
	}
}
