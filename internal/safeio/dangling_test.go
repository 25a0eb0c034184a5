package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A symlink whose target does not exist yet is followed as written (its
// target joined to its directory, link by link): one that leads outside
// the root is refused, naming the link that leads out, so that a target
// made later (by the agent program, a behavior, another step) is never
// read through a name that passed the check. Before, each passed, and
// its target, once made, was read. Made, it is still refused.
func TestConfineRefusesADanglingSymlinkOutside(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "project")
	base := filepath.Join(root, "w")
	outside := filepath.Join(dir, "outside")
	mkdirs(t, filepath.Join(base, "sub"), filepath.Join(outside, "deep"))
	probeSymlinks(t, base)
	sep := string(filepath.Separator)
	// made is where the link leads; blame, the link named as leading out.
	links := []struct{ link, target, made, blame string }{
		{"abs", filepath.Join(outside, "abs"), filepath.Join(outside, "abs"), "w/abs"},
		{"rel", ".." + sep + ".." + sep + "outside" + sep + "rel", filepath.Join(outside, "rel"), "w/rel"},
		{"chain1", "chain2", filepath.Join(outside, "chain"), "chain3"},
		{"chain2", ".." + sep + "chain3", "", ""},
		{"../chain3", filepath.Join(outside, "chain"), "", ""},
		// A ".." after a link climbs from where the link leads, not from
		// the name as written: sub/up leads to outside/deep, so
		// sub/up/../dotdot is outside/dotdot (not w/sub/dotdot).
		{"dotdot", "sub" + sep + "up" + sep + ".." + sep + "dotdot", filepath.Join(outside, "dotdot"), "w/sub/up"},
		{"sub/up", filepath.Join(outside, "deep"), "", ""},
	}
	for _, l := range links {
		if err := os.Symlink(l.target, filepath.Join(base, filepath.FromSlash(l.link))); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range links {
		if l.made == "" {
			continue
		}
		for _, name := range []string{l.link, l.link + "/x.yaml", `.\` + l.link + `\x.yaml`} {
			p, err := Confine(root, base, name)
			if errors.Is(err, ErrOutside) {
				if want := `: the symlink "` + l.blame + `" -> `; !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v; want it to name the link (%s)", name, err, want)
				}
				continue
			}
			// What passing lets through: the target, made after the
			// check, is read through the path Confine returned.
			target := l.made
			if name != l.link {
				target = filepath.Join(l.made, "x.yaml")
				mkdirs(t, l.made)
			}
			os.WriteFile(target, []byte("secret"), 0o600)
			data, rerr := ReadFile(p, "world", MaxData)
			t.Errorf("%s: Confine gave %q, %v; once %s is made, reading it gives %q, %v", name, p, err, target, data, rerr)
			os.RemoveAll(l.made)
		}
	}
	for _, l := range links {
		if l.made == "" {
			continue
		}
		mkdirs(t, l.made)
		for _, name := range []string{l.link, l.link + "/x.yaml"} {
			if p, err := Confine(root, base, name); !errors.Is(err, ErrOutside) {
				t.Errorf("%s, its target made: %q, %v; want it outside", name, p, err)
			}
		}
	}
}

// The message names the link and its target, quoted: they are outside
// text (an escape sequence in a name is not sent to a terminal).
func TestConfineNamesTheDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "project")
	mkdirs(t, filepath.Join(root, "w"))
	probeSymlinks(t, root)
	target := filepath.Join("..", "..", "out\x1b[31m")
	if err := os.Symlink(target, filepath.Join(root, "w", "e\x1bvil")); err != nil {
		t.Fatal(err)
	}
	_, err := Confine(root, filepath.Join(root, "w"), "e\x1bvil/x.yaml")
	want := "outside the project root " + root + `: the symlink "w/e\x1bvil" -> ` + strconv.Quote(target) + ` leads outside it, to ` +
		strconv.Quote(filepath.ToSlash(filepath.Join(dir, "out\x1b[31m", "x.yaml"))) + `, which does not exist (yet)`
	if !errors.Is(err, ErrOutside) || err.Error() != want || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// A symlink that does not resolve yet but leads inside the root is as
// good as a missing file there; a loop is an error naming the bound.
func TestConfineFollowsADanglingSymlinkInside(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "w")
	mkdirs(t, base)
	probeSymlinks(t, base)
	for link, target := range map[string]string{
		"later": "later.star", "chain": filepath.Join("..", "w", "later"), "loop1": "loop2", "loop2": "loop1",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"later", "chain", "chain/../x.star", "later/x.star"} {
		if p, err := Confine(root, base, name); err != nil || p != filepath.Join(base, FromName(name)) {
			t.Errorf("%s: %q, %v", name, p, err)
		}
	}
	for _, name := range []string{"loop1", "loop2/x.star"} {
		done := make(chan error, 1)
		go func() { _, err := Confine(root, base, name); done <- err }()
		select {
		case err := <-done:
			if want := "it leads through more than 40 symlinks (the bound; a loop?)"; err == nil || err.Error() != want {
				t.Errorf("%s: %v; want %q", name, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Confine does not end", name)
		}
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// probeSymlinks skips the test where symlinks cannot be made or do not
// resolve (see symlink).
func probeSymlinks(t *testing.T, dir string) {
	t.Helper()
	probe := filepath.Join(dir, "probe")
	os.WriteFile(probe, nil, 0o600)
	defer os.Remove(probe)
	defer os.Remove(probe + ".link")
	if !symlink(t, "probe", probe+".link") {
		t.Skip("no symlinks that resolve here")
	}
}

// Resolve follows symlinks as Confine does, to nothing too: the path a
// link leads to, absolute.
func TestResolve(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "w")
	mkdirs(t, base, filepath.Join(root, "d"))
	probeSymlinks(t, base)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"later": "later.star", "chain": filepath.Join("..", "w", "later"), "dir": filepath.Join(root, "d"), "loop1": "loop2", "loop2": "loop1",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"later": "w/later.star", "chain": "w/later.star", "dir/x/y": "d/x/y", "missing/../x": "w/x",
	} {
		if got, err := Resolve(filepath.Join(base, FromName(name))); err != nil || got != filepath.Join(real, FromName(want)) {
			t.Errorf("Resolve(w/%s) = %q, %v; want %s", name, got, err, filepath.Join(real, FromName(want)))
		}
	}
	if _, err := Resolve(filepath.Join(base, "loop1")); err == nil {
		t.Error("Resolve(loop1): no error")
	}
}
