package cassette

// Where a cassette may be read and written: inside the project root,
// symlinks resolved, as every path a suite names.

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dryfire-dev/dryfire/internal/safeio"
)

// PathError is a cassette file that may not be read or written where its
// path leads: outside the project root, or through a symlink to nothing.
type PathError struct {
	permanent
	File string
	Err  error // matches safeio.ErrOutside for a path outside the root
	Msg  string
}

func (e *PathError) Error() string {
	if e.Err != nil {
		return "cassette " + safeio.Describe(e.File, e.Err) + "; cassettes stay inside the project root (give --root DIR to widen it)"
	}
	return "cassette " + e.File + ": " + e.Msg
}

func (e *PathError) Unwrap() error { return e.Err }

// CheckPath says whether the cassette file may be read and written: it
// stays inside root ("": the current directory), symlinks resolved as
// safeio.Confine resolves them (a link to nothing outside is refused as
// one to something), and no symlink on the way to its directory leads to
// nothing (no directory could be made there). The error, a *PathError,
// names the symlink and its target, quoted. Call it before anything of
// the file is read or written.
func CheckPath(root, file string) error {
	if _, err := safeio.Confine(cmp.Or(root, "."), filepath.Dir(file), filepath.Base(file)); err != nil {
		return &PathError{File: file, Err: err}
	}
	if at, target, ok := danglingDir(filepath.Dir(file)); ok {
		return &PathError{File: file, Msg: "the symlink " + strconv.Quote(filepath.ToSlash(at)) + " -> " + strconv.Quote(target) + " leads to nothing, so no cassette can be written there: make the directory it names, or remove the link"}
	}
	return nil
}

// root is the project root of cfg's cassette: Config.Root, else the
// default root of the suite file (of the cassette's, without one).
func (cfg *Config) root() string {
	switch {
	case cfg.Root != "":
		return cfg.Root
	case cfg.SuiteFile != "":
		return safeio.DefaultRoot(cfg.SuiteFile)
	}
	return safeio.DefaultRoot(cfg.File)
}

// danglingDir finds a symlink to nothing among dir and the directories
// above it, up to the first that exists: where os.MkdirAll would fail
// with "file exists".
func danglingDir(dir string) (at, target string, ok bool) {
	for d := dir; ; {
		fi, err := os.Lstat(d)
		if err == nil {
			if fi.Mode()&fs.ModeSymlink == 0 {
				return "", "", false
			}
			if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
				return "", "", false
			}
			t, err := os.Readlink(d)
			return d, t, err == nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", "", false
		}
		d = up
	}
}
