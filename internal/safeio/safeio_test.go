package safeio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestHostileFilesAreRefusedWithoutReadingThem(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.dryfire.yaml")
	mkfifo(t, fifo)
	zero := filepath.Join(dir, "zero.dryfire.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.dryfire.yaml")
	if err := os.WriteFile(big, make([]byte, 2<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{fifo, "is not a regular file (it is a named pipe)"},
		{zero, "is not a regular file (it is a character device)"},
		{dir, "is not a regular file (it is a directory)"},
		{big, "is 2.0 MiB, more than the limit of 2 MiB for a file dryfire reads; set DRYFIRE_MAX_FILE_MB=N (MiB) to raise it"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(tc.file, "suite", 2<<20); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "suite "+tc.file) {
				t.Errorf("%s: %v; want %q", tc.file, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFile blocks", tc.file)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), "suite", MaxYAML); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	ok := filepath.Join(dir, "ok.yaml")
	os.WriteFile(ok, []byte("x: 1\n"), 0o600)
	if data, err := ReadFile(ok, "suite", 5); err != nil || string(data) != "x: 1\n" {
		t.Errorf("ok: %q %v", data, err)
	}
}

func TestLimitFromEnvironment(t *testing.T) {
	t.Setenv(EnvMaxFileMB, "3")
	if got := Limit(MaxYAML); got != 3<<20 {
		t.Errorf("limit %d", got)
	}
	t.Setenv(EnvMaxFileMB, "lots")
	if got := Limit(MaxYAML); got != MaxYAML {
		t.Errorf("limit %d", got)
	}
}

func TestConfineResolvesDotDotAndSymlinks(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "w"), 0o755)
	os.WriteFile(filepath.Join(root, "w", "a.star"), nil, 0o600)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "passwd"), nil, 0o600)
	linked := symlink(t, outside, filepath.Join(root, "w", "etc")) &&
		symlink(t, "a.star", filepath.Join(root, "w", "inside.star"))
	base := filepath.Join(root, "w")
	for _, tc := range []struct {
		name    string
		outside bool
		link    bool
	}{
		{"a.star", false, false},
		{"../w/a.star", false, false},
		{"inside.star", false, true},
		{"missing/dir/x.star", false, false},
		{"../../../../etc/passwd", true, false},
		{"etc/passwd", true, true},
		{"/etc/passwd", true, false},
		{"..", false, false},
		{"../..", true, false},
	} {
		if tc.link && !linked {
			continue
		}
		_, err := Confine(root, base, tc.name)
		if tc.outside != errors.Is(err, ErrOutside) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if p, err := Confine(root, base, "a.star"); err != nil || p != filepath.Join(base, "a.star") {
		t.Errorf("path %s %v", p, err)
	}
}

// A name in a suite means the same on every OS: '\' separates as '/'
// does, "..\" climbs, and "\x" starts at the root.
func TestConfineReadsBackslashesAsSlashes(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "w")
	os.MkdirAll(filepath.Join(base, "sub"), 0o755)
	os.WriteFile(filepath.Join(base, "sub", "a.star"), []byte("x = 1\n"), 0o600)
	for _, name := range []string{`sub\a.star`, `sub/a.star`, `.\sub\a.star`, `..\w\sub\a.star`, `sub\..\sub\a.star`, `sub//a.star`} {
		p, err := Confine(root, base, name)
		if err != nil || p != filepath.Join(base, "sub", "a.star") {
			t.Errorf("%s: %q, %v; want %q", name, p, err, filepath.Join(base, "sub", "a.star"))
			continue
		}
		if data, err := ReadFile(p, "behavior module", MaxData); err != nil || string(data) != "x = 1\n" {
			t.Errorf("%s: read %q, %v", name, data, err)
		}
	}
	for _, name := range []string{`..\..\etc\passwd`, `..\..`, `sub\..\..\..\x`, `\etc\passwd`, `\\host\share\x.yaml`, `//host/share/x.yaml`} {
		if p, err := Confine(root, base, name); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: %q, %v; want it outside the project root", name, p, err)
		}
	}
	// Inside the root, an absolute name is as good as a relative one.
	abs := filepath.Join(base, "sub", "a.star")
	if p, err := Confine(root, base, abs); err != nil || p != abs {
		t.Errorf("%s: %q, %v", abs, p, err)
	}
}

// An absolute name outside the root is refused as written, before its
// path is looked at (on Windows a UNC name would connect to its host):
// one that a symlink out there would lead back inside is refused too.
func TestConfineRefusesAnAbsoluteNameOutsideUnresolved(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "project")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "a.star"), nil, 0o600)
	link := filepath.Join(dir, "elsewhere")
	if !symlink(t, root, link) {
		t.Skip("no symlinks here")
	}
	// Written relative, the name is resolved: the link leads inside.
	if _, err := Confine(root, root, "../elsewhere/a.star"); err != nil {
		t.Errorf("relative: %v", err)
	}
	if p, err := Confine(root, root, filepath.Join(link, "a.star")); !errors.Is(err, ErrOutside) {
		t.Errorf("absolute: %q, %v; want it outside the project root", p, err)
	}
}

// symlink makes a symlink and says whether it leads to its target:
// Windows makes them only with a privilege (or in developer mode), and
// Wine 8 makes ones that do not resolve. Without one, the cases through
// symlinks are left out.
func symlink(t *testing.T, target, link string) bool {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(link), target))
	if filepath.IsAbs(target) {
		want, err = filepath.EvalSymlinks(target)
	}
	got, gerr := filepath.EvalSymlinks(link)
	return err == nil && gerr == nil && got == want
}

// A file is read into one buffer of its size: reading 4 MiB allocates
// about 4 MiB, not the doubling copies of a growing buffer.
func TestReadFileAllocatesTheFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := ReadFile(path, "file", 8<<20)
	runtime.ReadMemStats(&after)
	if err != nil || len(data) != 4<<20 {
		t.Fatalf("read %d bytes: %v", len(data), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 5<<20 {
		t.Errorf("reading a 4 MiB file allocated %d bytes", got)
	}
}
