// Package safeio reads the files a user's suite, world or report names
// without letting one of them take the process down: only regular files
// (a FIFO would block, /dev/zero never ends), at most a declared size,
// and only inside the project root, symlinks resolved (confine.go).
package safeio

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
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
	if n, err := strconv.ParseInt(os.Getenv(EnvMaxFileMB), 10, 64); err == nil && n > 0 && n < 1<<20 {
		return n << 20
	}
	return def
}

// ReadFile reads a regular file of at most limit bytes (see Limit). what
// names the file in messages ("suite", "behavior module"). A missing file
// is an error matching fs.ErrNotExist.
func ReadFile(path, what string, limit int64) ([]byte, error) {
	f, size, err := open(path, what, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (and the room a read asks
	// for, which sees growth): a large file is in memory once, not in the
	// doubling copies of a growing buffer.
	buf := bytes.NewBuffer(make([]byte, 0, min(size, limit)+bytes.MinRead))
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
