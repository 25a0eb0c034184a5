// Package workspace gives each case of an agent.command suite its own copy
// of a template directory, so that what one case's agent writes no other
// case reads, and says afterwards what the agent changed in it. A fresh
// copy is made per case in a new temporary directory; the template itself
// is never written.
package workspace

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/report"
)

// Bounds on a template (and on a workspace read back after a case): more
// is an error that names the bound.
const (
	MaxFiles = 10000     // files and directories
	MaxBytes = 256 << 20 // bytes of all regular files
)

// Bounds on what a report says of the changes.
const (
	MaxChanges   = 50       // changes listed; the rest are counted
	maxDiffInput = 64 << 10 // larger files are not diffed
	maxDiffLines = 20       // lines of a short diff
)

// entry is one file of a tree, by its slash path.
type entry struct {
	mode fs.FileMode // type bits and permissions
	size int64
	sum  [sha256.Size]byte // regular files
	src  string            // regular files: where the bytes are read from
	link string            // symlinks: the target
}

// Template is a scanned template directory.
type Template struct {
	Dir   string
	files map[string]entry
	order []string // sorted paths
}

// Scan reads a template directory's tree, within MaxFiles and MaxBytes,
// as Copy makes it. Its symlinks, each resolved as safeio.Resolve does:
// one that leads inside the template (to something or to nothing) is
// kept as a symlink, relative, so that in the copy it leads to the same
// place of the copy; one that leads elsewhere inside the project root
// root is copied as the file or directory it leads to (the copy is the
// case's own, and nothing is written through it); one that leads
// outside root, to nothing outside the template, or to a directory that
// holds it is an error that names it and its target. root "" is the
// template itself.
func Scan(dir, root string) (*Template, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", dir)
	}
	root = cmp.Or(root, dir)
	real, err := safeio.Resolve(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	rootReal, err := safeio.Resolve(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: the project root %s: %w", dir, root, err)
	}
	sc := &scanner{files: map[string]entry{}, dir: dir, real: real, root: root, rootReal: rootReal}
	if err := sc.walk(dir, ""); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	slices.Sort(sc.order)
	return &Template{Dir: dir, files: sc.files, order: sc.order}, nil
}

// keptPrefix begins the name of every copy, in the temporary directory.
const keptPrefix = "dryfire-workspace-"

// CheckKept checks that dir, a report's workspace.kept, is a directory
// Copy makes: keptPrefix* directly in the temporary directory, and not a
// symlink. A report is data, and may name any directory there, whose files
// a file check would read and print when the report is re-checked.
func CheckKept(dir string) error {
	tmp := os.TempDir()
	bad := func(why string) error {
		return fmt.Errorf("the report's workspace.kept %q is not a workspace dryfire kept (a %s* directory of %s, %s): not read", dir, keptPrefix, tmp, why)
	}
	if !filepath.IsAbs(dir) || filepath.Dir(filepath.Clean(dir)) != filepath.Clean(tmp) || !strings.HasPrefix(filepath.Base(dir), keptPrefix) {
		return bad("the only place a workspace is kept")
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return bad("not a symlink")
	}
	return nil
}

// Copy makes a new temporary directory holding a copy of the template
// (modes kept; symlinks as Scan says) and returns its path. The caller
// removes it.
func (t *Template) Copy() (string, error) {
	dst, err := os.MkdirTemp("", keptPrefix)
	if err != nil {
		return "", fmt.Errorf("making a workspace: %w", err)
	}
	// Symlinks last: on Windows a link to a directory is made as one only
	// when its target is there.
	var links []string
	for _, rel := range t.order {
		e := t.files[rel]
		to := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case e.mode.IsDir():
			err = os.Mkdir(to, e.mode.Perm()|0o700)
		case e.mode&fs.ModeSymlink != 0:
			links = append(links, rel)
		default:
			err = copyFile(e.src, to, e.mode.Perm())
		}
		if err != nil {
			break
		}
	}
	for _, rel := range links {
		if err == nil {
			err = os.Symlink(t.files[rel].link, filepath.Join(dst, filepath.FromSlash(rel)))
		}
	}
	if err != nil {
		os.RemoveAll(dst)
		return "", fmt.Errorf("copying the workspace %s: %w", t.Dir, err)
	}
	return dst, nil
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Change is one difference between a workspace and its template (the
// report's type).
type Change = report.WorkspaceChange

// Changes are what a case's agent changed in its workspace.
type Changes struct {
	List []Change `json:"changes"`
	More int      `json:"more,omitempty"` // changes not listed (past MaxChanges)
}

// Diff compares a workspace with the template it was copied from.
func (t *Template) Diff(dir string) (*Changes, error) {
	sc := &scanner{files: map[string]entry{}, dir: dir}
	if err := sc.walk(dir, ""); err != nil {
		return nil, fmt.Errorf("reading the workspace back: %w", err)
	}
	files, order := sc.files, sc.order
	slices.Sort(order)
	var all []Change
	for _, rel := range order {
		now := files[rel]
		was, ok := t.files[rel]
		switch {
		case !ok:
			c := Change{Path: rel, Change: "added"}
			if now.mode.IsRegular() {
				c.Diff = t.shortDiff(rel, nil, filepath.Join(dir, filepath.FromSlash(rel)))
			}
			all = append(all, c)
		case was.mode.Type() != now.mode.Type() || was.sum != now.sum || was.link != now.link || was.mode.Perm() != now.mode.Perm() && !now.mode.IsDir():
			c := Change{Path: rel, Change: "modified"}
			if was.mode.IsRegular() && now.mode.IsRegular() && was.sum != now.sum {
				c.Diff = t.shortDiff(rel, &was.src, filepath.Join(dir, filepath.FromSlash(rel)))
			}
			all = append(all, c)
		}
	}
	for _, rel := range t.order {
		if _, ok := files[rel]; !ok {
			all = append(all, Change{Path: rel, Change: "removed"})
		}
	}
	slices.SortFunc(all, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	ch := &Changes{List: all}
	if len(all) > MaxChanges {
		ch.List, ch.More = all[:MaxChanges], len(all)-MaxChanges
	}
	return ch, nil
}

// shortDiff is a unified diff of a text file against its template
// version (old nil: an added file), cut to maxDiffLines lines.
func (t *Template) shortDiff(rel string, old *string, now string) string {
	read := func(p string) ([]byte, bool) {
		info, err := os.Lstat(p)
		if err != nil || !info.Mode().IsRegular() || info.Size() > maxDiffInput {
			return nil, false
		}
		data, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			return nil, false
		}
		return data, true
	}
	var was []byte
	if old != nil {
		var ok bool
		if was, ok = read(*old); !ok {
			return ""
		}
	}
	data, ok := read(now)
	if !ok {
		return ""
	}
	from := "template/" + rel
	if old == nil {
		from = "/dev/null"
	}
	d := diff.Diff(from, was, "workspace/"+rel, data)
	lines := strings.Split(strings.TrimRight(string(d), "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "diff ") {
		lines = lines[1:]
	}
	if len(lines) > maxDiffLines {
		n := len(lines) - maxDiffLines
		lines = append(lines[:maxDiffLines], fmt.Sprintf("… %d more lines", n))
	}
	return strings.Join(lines, "\n")
}
