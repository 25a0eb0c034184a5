package safeio

// Containment: a path written in a suite or world file stays inside the
// project root, symlinks resolved, including one whose target does not
// exist yet.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrOutside is matched by the error of Confine for a path outside the
// root; its text reads "outside the project root ROOT", and goes on to
// name the symlink when one whose target does not exist leads outside.
var ErrOutside = errors.New("outside the project root")

// MaxLinks bounds the symlinks one path may lead through (Linux's own
// bound): more is an error naming the bound, so a loop ends.
const MaxLinks = 40

// DefaultRoot is the project root of a file given no --root: the
// current directory when the file is inside it, else the file's own
// directory.
func DefaultRoot(file string) string {
	dir := filepath.Dir(file)
	cwd, err := realPath(".", nil)
	if err != nil {
		return dir
	}
	if d, err := realPath(dir, nil); err == nil && within(cwd.path, d.path) {
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
// Symlinks are followed by their targets as written, joined to their
// directories, link after link (at most MaxLinks), whether their targets
// exist or not: one whose target does not exist yet and lies outside is
// refused as one whose target does, so that a target made later (by the
// agent program, a behavior, another step) is never read or written
// through a name that passed. The message names the link that leads
// outside, and its target.
//
// A name means the same on every OS: '\' separates as '/' does (a suite
// written on Windows runs elsewhere; a file name holding '\' could not be
// checked out on Windows anyway), and a name that starts at a root ("/x"
// or "\x"; on Windows also "C:\x", "C:x" and UNC or device paths such as
// "\\host\share\x") is absolute, not relative to base. An absolute name
// outside root is refused as written, before anything looks at it: a UNC
// name makes no network connection. So is a symlink's absolute target
// outside root (written that way, even if it would lead back inside).
func Confine(root, base, name string) (string, error) {
	rel := FromName(name)
	absolute := isAbs(rel)
	p := filepath.Join(base, rel)
	if absolute {
		abs, err := filepath.Abs(rel)
		if err != nil {
			return "", err
		}
		p = abs
	}
	r, err := realPath(root, nil)
	if err != nil {
		return "", fmt.Errorf("resolving the project root %s: %w", root, err)
	}
	a, err := filepath.Abs(root)
	if err != nil {
		a = r.path
	}
	outside := func(p string) bool { return !within(a, p) && !within(r.path, p) }
	if absolute && outside(p) {
		return "", fmt.Errorf("%w %s", ErrOutside, root)
	}
	rp, err := realPath(p, outside)
	if err != nil {
		return "", err
	}
	if !within(r.path, rp.path) {
		return "", fmt.Errorf("%w %s%s", ErrOutside, root, rp.via(r.path))
	}
	return p, nil
}

// Resolve is p, absolute, with its symlinks resolved as Confine resolves
// them: each followed by its target as written, joined to its directory,
// whether that target exists or not (from the first name that does not
// exist on, the path is as written), at most MaxLinks. Check a path with
// Confine first: an absolute target outside is looked at here (on
// Windows a UNC target connects to its host).
func Resolve(p string) (string, error) {
	r, err := realPath(p, nil)
	if err != nil {
		return "", err
	}
	return r.path, nil
}

// FromName is a path written in a suite or world file in the OS's form:
// '\' and '/' both separate (see Confine).
func FromName(name string) string {
	return filepath.FromSlash(strings.ReplaceAll(name, `\`, "/"))
}

// isAbs says whether p starts at a root: absolute, or on Windows with a
// drive or rooted on the current one ('/' or '\' first).
func isAbs(p string) bool {
	return filepath.IsAbs(p) || filepath.VolumeName(p) != "" || p != "" && os.IsPathSeparator(p[0])
}

// resolved is a path with its symlinks resolved, and how.
type resolved struct {
	path    string
	links   []link // followed, in order
	missing bool   // path does not exist (from its first missing name on, it is as written)
}

type link struct{ at, target string } // where the link is, its target as written

// via is the clause of a message that names the last symlink followed
// from inside root (the one that leads outside), when there is one:
// ": the symlink "w/etc" -> "/etc" leads outside it, to "/etc/passwd"".
// Names and targets are quoted: they are outside text.
func (r resolved) via(root string) string {
	for i := len(r.links) - 1; i >= 0; i-- {
		l := r.links[i]
		if !within(root, l.at) {
			continue
		}
		msg := fmt.Sprintf(": the symlink %s -> %s leads outside it, to %s", strconv.Quote(shown(root, l.at)), strconv.Quote(l.target), strconv.Quote(filepath.ToSlash(r.path)))
		if r.missing {
			msg += ", which does not exist (yet)"
		}
		return msg
	}
	return ""
}

// realPath is p absolute with its symlinks resolved, as
// filepath.EvalSymlinks would, but a symlink is followed whether its
// target exists or not, and the path from its first missing name on is
// as written (cleaned). An absolute target that stop (when not nil) says
// is outside is not looked at (on Windows a UNC target would connect to
// its host): the path it leads to is returned.
func realPath(p string, stop func(string) bool) (resolved, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return resolved{}, err
	}
	vol := filepath.VolumeName(abs)
	dest := vol + string(filepath.Separator)
	rest := split(abs[len(vol):])
	var res resolved
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 && !fi.IsDir() && len(rest) > 0 {
			// Nothing there (or a file where a directory would be).
			res.path, res.missing = filepath.Join(append([]string{normal(dest), c}, rest...)...), true
			return res, nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dest = next
			continue
		}
		if len(res.links) == MaxLinks {
			return resolved{}, fmt.Errorf("it leads through more than %d symlinks (the bound; a loop?)", MaxLinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return resolved{}, err
		}
		res.links = append(res.links, link{at: next, target: target})
		if !isAbs(target) {
			rest = append(split(target), rest...)
			continue
		}
		t := target
		if filepath.VolumeName(t) == "" {
			t = filepath.VolumeName(dest) + t // rooted on the link's drive
		}
		if to := filepath.Join(append([]string{t}, rest...)...); stop != nil && stop(to) {
			res.path = to
			return res, nil
		}
		tv := filepath.VolumeName(t)
		dest = tv + string(filepath.Separator)
		rest = append(split(t[len(tv):]), rest...)
	}
	res.path = normal(dest)
	return res, nil
}

// normal is dir, a directory without symlinks, in the form
// filepath.EvalSymlinks gives (on Windows: long names, their case).
func normal(dir string) string {
	if n, err := filepath.EvalSymlinks(dir); err == nil {
		return n
	}
	return dir
}

// split is p's components; on Windows '/' separates as '\' does.
func split(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

// shown is a path for a message: relative to root, with '/', when inside.
func shown(root, p string) string {
	if within(root, p) {
		if rel, err := filepath.Rel(root, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

func within(root, p string) bool {
	if root == p {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
