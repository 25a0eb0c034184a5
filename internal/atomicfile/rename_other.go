//go:build !windows

package atomicfile

import "os"

// rename is os.Rename: a file open elsewhere is replaced as it is.
func rename(from, to string) error { return os.Rename(from, to) }
