package atomicfile

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// renameRetry is how long rename tries again while another program
// holds the target open (an editor, a virus scanner, a reader of the
// report): Windows refuses to replace a file open without delete
// sharing, which is how Go (and most programs) open files.
const renameRetry = 2 * time.Second

// rename renames over a file that another program may hold open for a
// moment, as Go's own tools do on Windows: access denied and sharing
// violations are tried again for up to renameRetry.
func rename(from, to string) error {
	deadline := time.Now().Add(renameRetry)
	wait := time.Millisecond
	for {
		err := os.Rename(from, to)
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
}

func transient(err error) bool {
	const errorSharingViolation syscall.Errno = 32
	var errno syscall.Errno
	return errors.As(err, &errno) && (errno == syscall.ERROR_ACCESS_DENIED || errno == errorSharingViolation)
}
