// Package safeio reads the files a user's suite, world or report names
// without letting one of them take the process down: only regular files
// (a FIFO would block, /dev/zero never ends), at most a declared size,
// and only inside the project root, symlinks resolved.
package safeio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Default size limits, by kind of file.
const (
	// MaxYAML bounds a suite or world file: parsed YAML takes tens of
	// times its size in memory.
	MaxYAML int64 = 8 << 20
	// MaxData bounds everything else dryfire reads: behavior modules,
	// cassettes, reports.
	MaxData int64 = 64 << 20
)

// EnvMaxFileMB, set to a number of MiB, replaces every size limit.
const EnvMaxFileMB = "DRYFIRE_MAX_FILE_MB"

// Limit is the size limit for a kind of file (MaxYAML or MaxData),
// unless $DRYFIRE_MAX_FILE_MB replaces it.
func Limit(def int64) int64 {
	if v := os.Getenv(EnvMaxFileMB); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < 1<<20 {
			return n << 20
		}
	}
	return def
}

// ReadFile reads a regular file of at most limit bytes (see Limit). what
// names the file in messages ("suite", "behavior module"). A missing file
// is an error matching fs.ErrNotExist.
func ReadFile(path, what string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file (it is %s)", what, path, describeMode(st.Mode()))
	}
	if st.Size() > limit {
		return nil, tooLarge(path, what, st.Size(), limit)
	}
	// Read into a buffer of the file's size (and the room a read asks
	// for, which sees growth): a large file is in memory once, not in the
	// doubling copies of a growing buffer.
	buf := bytes.NewBuffer(make([]byte, 0, min(st.Size(), limit)+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, limit+1))
	data := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, what, int64(len(data)), limit)
	}
	return data, nil
}

func tooLarge(path, what string, size, limit int64) error {
	return fmt.Errorf("%s %s is %s, more than the limit of %s for a file dryfire reads; set %s=N (MiB) to raise it", what, path, mib(size), mib(limit), EnvMaxFileMB)
}

func mib(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// ErrOutside is matched by the error of Confine for a path outside the
// root; its text reads "outside the project root ROOT".
var ErrOutside = errors.New("outside the project root")

// DefaultRoot is the project root of a file given no --root: the
// current directory when the file is inside it, else the file's own
// directory.
func DefaultRoot(file string) string {
	dir := filepath.Dir(file)
	cwd, err := realPath(".")
	if err != nil {
		return dir
	}
	if d, err := realPath(dir); err == nil && within(cwd, d) {
		return "."
	}
	return dir
}

// Describe is the message for a path that Confine refused: "NAME is
// outside the project root ROOT", or "NAME: ERROR".
func Describe(name string, err error) string {
	if errors.Is(err, ErrOutside) {
		return name + " is " + err.Error()
	}
	return name + ": " + err.Error()
}

// Confine resolves name, written in a file in directory base, and checks
// that it stays inside root once symlinks are resolved (as far as the
// path exists). It returns the path to open: base joined with name.
//
// A name means the same on every OS: '\' separates as '/' does (a suite
// written on Windows runs elsewhere; a file name holding '\' could not be
// checked out on Windows anyway), and a name that starts at a root ("/x"
// or "\x"; on Windows also "C:\x", "C:x" and UNC or device paths such as
// "\\host\share\x") is absolute, not relative to base. An absolute name
// outside root is refused as written, before anything looks at it: a UNC
// name makes no network connection.
func Confine(root, base, name string) (string, error) {
	rel := FromName(name)
	absolute := filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" || strings.HasPrefix(rel, string(filepath.Separator))
	p := filepath.Join(base, rel)
	if absolute {
		abs, err := filepath.Abs(rel)
		if err != nil {
			return "", err
		}
		p = abs
	}
	r, err := realPath(root)
	if err != nil {
		return "", fmt.Errorf("resolving the project root %s: %w", root, err)
	}
	if absolute {
		if a, err := filepath.Abs(root); err != nil || !within(a, p) && !within(r, p) {
			return "", fmt.Errorf("%w %s", ErrOutside, root)
		}
	}
	rp, err := realPath(p)
	if err != nil {
		return "", err
	}
	if !within(r, rp) {
		return "", fmt.Errorf("%w %s", ErrOutside, root)
	}
	return p, nil
}

// FromName is a path written in a suite or world file in the OS's form:
// '\' and '/' both separate (see Confine).
func FromName(name string) string {
	return filepath.FromSlash(strings.ReplaceAll(name, `\`, "/"))
}

// realPath is p absolute with the symlinks of its longest existing
// prefix resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	cur := abs
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(root, p string) bool {
	if root == p {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
