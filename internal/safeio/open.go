package safeio

import (
	"fmt"
	"os"
	"syscall"
)

// Open opens a regular file of at most limit bytes (see Limit) to be
// read as a stream, as ReadFile would read it whole; what names it in
// messages. A missing file is an error matching fs.ErrNotExist.
func Open(path, what string, limit int64) (*os.File, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s %s is not a regular file (it is %s)", what, path, describeMode(st.Mode()))
	}
	if st.Size() > limit {
		f.Close()
		return nil, tooLarge(path, what, st.Size(), limit)
	}
	return f, nil
}
