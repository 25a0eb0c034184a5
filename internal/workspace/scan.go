package workspace

// Reading a tree: a template as Copy makes it (its symlinks resolved), or
// a workspace back after a case (its symlinks as they are).

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/safeio"
)

// scanner reads a tree into files, within MaxFiles and MaxBytes.
type scanner struct {
	files map[string]entry
	order []string
	total int64

	dir string // the tree, as named
	// real is the template's path with its symlinks resolved, root the
	// project root (rootReal resolved); real "": a workspace read back,
	// whose symlinks are kept as they are.
	real, root, rootReal string
	// in are the directories outside the template being copied in, by
	// their resolved paths (a link to one of them is a loop).
	in []string
}

// walk reads directory src, at rel (a slash path; "" the top) in the tree.
func (sc *scanner) walk(src, rel string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, d := range ents {
		p, r := filepath.Join(src, d.Name()), path.Join(rel, d.Name())
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 && sc.real != "" {
			err = sc.link(p, r)
		} else {
			err = sc.entry(p, r, info)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// entry adds what is at p (info: os.Lstat's, or os.Stat's for what a
// symlink leads to) as rel.
func (sc *scanner) entry(p, rel string, info fs.FileInfo) error {
	if len(sc.files) >= MaxFiles {
		return fmt.Errorf("more than %d files and directories (the workspace bound)", MaxFiles)
	}
	e := entry{mode: info.Mode()}
	switch {
	case info.Mode().IsRegular():
		e.size, e.src = info.Size(), p
		sc.total += e.size
		if sc.total > MaxBytes {
			return fmt.Errorf("more than %d MiB in its files (the workspace bound)", MaxBytes>>20)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		e.sum = sha256.Sum256(data)
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return err
		}
		e.link = t
	case info.IsDir():
	default:
		return fmt.Errorf("%s is %s: a workspace holds only files, directories and symlinks", rel, kind(info.Mode()))
	}
	sc.files[rel] = e
	sc.order = append(sc.order, rel)
	if info.IsDir() {
		return sc.walk(p, rel)
	}
	return nil
}

// link adds the template's symlink at p as rel (see Scan).
func (sc *scanner) link(p, rel string) error {
	target, err := os.Readlink(p)
	if err != nil {
		return err
	}
	// Where the link is: in the template, or in a directory copied in.
	name := path.Join(filepath.ToSlash(sc.dir), rel)
	if len(sc.in) > 0 {
		name = filepath.ToSlash(p)
		if r, ok := under(sc.rootReal, p); ok {
			name = filepath.ToSlash(r)
		}
	}
	if _, err := safeio.Confine(sc.root, filepath.Dir(p), filepath.Base(p)); err != nil {
		return fmt.Errorf("symlink %s; a workspace's symlinks stay inside the project root (give --root DIR to widen it)", safeio.Describe(name, err))
	}
	what := "the symlink " + strconv.Quote(name) + " -> " + strconv.Quote(target)
	to, err := safeio.Resolve(p)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if in, ok := under(sc.real, to); ok {
		// To the same place of the copy.
		rel2, err := filepath.Rel(filepath.Dir(filepath.FromSlash(rel)), in)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if len(sc.files) >= MaxFiles {
			return fmt.Errorf("more than %d files and directories (the workspace bound)", MaxFiles)
		}
		sc.files[rel] = entry{mode: info.Mode(), link: rel2}
		sc.order = append(sc.order, rel)
		return nil
	}
	info, err := os.Stat(to)
	if err != nil {
		return fmt.Errorf("%s leads to nothing outside the template (%s): make its target, or remove the link", what, strconv.Quote(filepath.ToSlash(to)))
	}
	if info.IsDir() {
		if slices.ContainsFunc(sc.in, func(d string) bool { _, ok := under(to, d); return ok }) {
			return fmt.Errorf("%s leads to a directory that holds it (a loop)", what)
		}
		sc.in = append(sc.in, to)
		defer func() { sc.in = sc.in[:len(sc.in)-1] }()
	}
	return sc.entry(to, rel, info)
}

// under is p relative to dir, when p is dir or inside it.
func under(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
