package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canSymlink skips t where symlinks cannot be made, or do not resolve.
func canSymlink(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644)
	if err := os.Symlink("probe", filepath.Join(dir, "link")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "link")); err != nil {
		t.Skipf("symlinks do not resolve here: %v", err)
	}
}

func write(t *testing.T, root string, files map[string]string, links map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(filepath.FromSlash(target), p); err != nil {
			t.Fatal(err)
		}
	}
}

// A template's symlinks in the copy: one that leads inside the template
// (relative, absolute, to nothing yet, from a directory copied in) is a
// relative link to the same place of the copy; one that leads elsewhere
// in the project is copied as the file or directory it leads to, so
// that nothing the agent writes reaches the project. Before, each link
// was copied as written: the absolute one led back into the template
// (written through by the agent), the one to ../shared to a shared
// directory of the temporary directory, or to nothing.
func TestCopyResolvesTemplateSymlinks(t *testing.T) {
	canSymlink(t)
	project := t.TempDir()
	tpl := filepath.Join(project, "tpl")
	write(t, project, map[string]string{
		"tpl/file.txt":     "hello\n",
		"tpl/sub/data.txt": "data\n",
		"shared/a.txt":     "shared\n",
	}, map[string]string{
		"tpl/rel":       "sub/data.txt",
		"tpl/abs":       filepath.Join(tpl, "sub"),
		"tpl/sub/up":    "../file.txt",
		"tpl/later":     "made-later.txt",
		"tpl/shared":    "../shared",
		"tpl/one":       "../shared/a.txt",
		"shared/back":   "../tpl/file.txt",
		"shared/nested": "../tpl/sub",
	})
	tp, err := Scan(tpl, project)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := tp.Copy()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dst)

	links := map[string]string{ // in the copy: its target as written
		"rel": "sub/data.txt", "abs": "sub", "sub/up": "../file.txt", "later": "made-later.txt",
		"shared/back": "../file.txt", "shared/nested": "../sub",
	}
	for name, want := range links {
		got, err := os.Readlink(filepath.Join(dst, filepath.FromSlash(name)))
		if err != nil || filepath.ToSlash(got) != want {
			t.Errorf("%s: a link to %q (%v); want one to %q", name, got, err, want)
		}
	}
	for name, want := range map[string]string{"rel": "data\n", "abs/data.txt": "data\n", "sub/up": "hello\n", "shared/a.txt": "shared\n", "shared/back": "hello\n", "one": "shared\n", "shared/nested/data.txt": "data\n"} {
		if data, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name))); err != nil || string(data) != want {
			t.Errorf("%s reads %q (%v); want %q", name, data, err, want)
		}
	}
	for _, name := range []string{"shared", "one"} {
		if fi, err := os.Lstat(filepath.Join(dst, name)); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s: %v, %v; want what the link leads to, copied", name, fi, err)
		}
	}

	// Nothing differs from the template as copied; what the agent
	// writes stays in the copy.
	if ch, err := tp.Diff(dst); err != nil || len(ch.List) != 0 {
		t.Fatalf("a fresh copy differs: %+v, %v", ch, err)
	}
	os.WriteFile(filepath.Join(dst, "one"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(dst, "abs", "data.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(dst, "made-later.txt"), []byte("later\n"), 0o644)
	for _, p := range []string{"shared/a.txt", "tpl/sub/data.txt"} {
		if data, _ := os.ReadFile(filepath.Join(project, filepath.FromSlash(p))); strings.Contains(string(data), "changed") {
			t.Errorf("the agent wrote %s of the project", p)
		}
	}
	if _, err := os.Stat(filepath.Join(tpl, "made-later.txt")); err == nil {
		t.Error("the agent wrote into the template")
	}
	ch, err := tp.Diff(dst)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ch.List {
		got = append(got, c.Change+" "+c.Path)
	}
	if want := "added made-later.txt|modified one|modified sub/data.txt"; strings.Join(got, "|") != want {
		t.Errorf("changes %s; want %s", strings.Join(got, "|"), want)
	}
	if len(ch.List) == 3 && !strings.Contains(ch.List[1].Diff, "-shared\n+changed") {
		t.Errorf("the diff of one:\n%s", ch.List[1].Diff)
	}
}

// A template's symlink that leads out of the project root (absolute or
// relative, directly or at the end of a chain), to nothing outside the
// template, or to a directory that holds it is an error naming it and
// its target; nothing is copied. Before, each was copied as written.
func TestScanRefusesTemplateSymlinksOut(t *testing.T) {
	canSymlink(t)
	for _, tc := range []struct {
		name, link, target string
		more               map[string]string
		want               string
	}{
		{"absolute", "etc", "/etc", nil,
			`symlink tpl/etc is outside the project root ROOT: the symlink "tpl/etc" -> "/etc" leads outside it, to "/etc"; a workspace's symlinks stay inside the project root (give --root DIR to widen it)`},
		{"relative", "secret", "../../outside/secret.txt", nil,
			`symlink tpl/secret is outside the project root ROOT: the symlink "tpl/secret" -> "../../outside/secret.txt" leads outside it, to "OUTSIDE/secret.txt"; a workspace's`},
		{"a chain", "a", "b", map[string]string{"tpl/b": "../../outside"},
			`symlink tpl/a is outside the project root ROOT: the symlink "tpl/b" -> "../../outside" leads outside it, to "OUTSIDE"; `},
		{"to nothing", "gone", "../nothing.txt", nil,
			`the symlink "tpl/gone" -> "../nothing.txt" leads to nothing outside the template ("ROOT/nothing.txt"): make its target, or remove the link`},
		{"a loop", "loop", "..", nil,
			`the symlink "tpl/loop" -> ".." leads to a directory that holds it (a loop)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
			write(t, dir, map[string]string{"project/tpl/file.txt": "hello\n", "outside/secret.txt": "secret\n"}, nil)
			write(t, project, nil, tc.more)
			write(t, project, nil, map[string]string{"tpl/" + tc.link: tc.target})
			t.Chdir(project)
			_, err := Scan("tpl", ".")
			want := strings.NewReplacer("ROOT", ".", "OUTSIDE", filepath.ToSlash(outside)).Replace(tc.want)
			if tc.name == "to nothing" {
				want = strings.ReplaceAll(tc.want, "ROOT", filepath.ToSlash(project))
			}
			if err == nil || !strings.Contains(filepath.ToSlash(err.Error()), want) || !strings.HasPrefix(err.Error(), "workspace tpl: ") {
				t.Errorf("Scan: %v\nwant an error with %s", err, want)
			}
		})
	}
}

// A template that is itself a symlink (to a directory inside the
// project) is copied whole; it was copied empty (the walk did not enter
// it).
func TestCopyATemplateThatIsASymlink(t *testing.T) {
	canSymlink(t)
	project := t.TempDir()
	write(t, project, map[string]string{"fixtures/v2/a.txt": "a\n"}, map[string]string{"tpl": "fixtures/v2"})
	tp, err := Scan(filepath.Join(project, "tpl"), project)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := tp.Copy()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dst)
	if data, err := os.ReadFile(filepath.Join(dst, "a.txt")); err != nil || string(data) != "a\n" {
		t.Errorf("a.txt: %q, %v", data, err)
	}
}
