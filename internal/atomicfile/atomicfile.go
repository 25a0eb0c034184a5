// Package atomicfile writes files so that a reader, or a crash, never sees
// half of one: the data goes to a temporary file beside the target, is
// synced, and is renamed over it.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data atomically.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith replaces path atomically with what write writes (buffered),
// so that a large file need not be in memory at once.
func WriteWith(path string, perm os.FileMode, write func(io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// File is a file being written that replaces path only when committed:
// until then path is untouched, and an aborted file leaves nothing.
type File struct {
	path string
	perm os.FileMode
	f    *os.File
	bw   *bufio.Writer
}

// Create starts a File that will replace path, with permissions perm.
func Create(path string, perm os.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &File{path: path, perm: perm, f: f, bw: bufio.NewWriterSize(f, 256<<10)}, nil
}

// Write writes to the file (buffered).
func (f *File) Write(p []byte) (int, error) { return f.bw.Write(p) }

// Abort removes the file; path stays as it was.
func (f *File) Abort() {
	f.f.Close()
	os.Remove(f.f.Name())
}

// Commit syncs the file and renames it over path.
func (f *File) Commit() error {
	tmp := f.f.Name()
	fail := func(err error) error {
		f.Abort()
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if err := f.bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.f.Chmod(f.perm); err != nil {
		return fail(err)
	}
	if err := f.f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if err := rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}
