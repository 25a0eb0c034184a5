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
	f, _, err := open(path, what, limit)
	return f, err
}

// open is Open, with the file's size (for ReadFile's buffer).
func open(path, what string, limit int64) (*os.File, int64, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%s %s is not a regular file (it is %s)", what, path, describeMode(st.Mode()))
	case st.Size() > limit:
		err = tooLarge(path, what, st.Size(), limit)
	default:
		return f, st.Size(), nil
	}
	f.Close()
	return nil, 0, err
}
