package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
)

// A cassette `dryfire serve --case` recorded holds the conversation of an
// agent dryfire does not run (a framework's); its note names the serve
// command that records it again. dryfire run replays it as any cassette,
// but never records over it: in modes all and new the case errs, naming
// that command (or deleting the file), and every hint of a replay that
// strays names it too, not dryfire run's --record all.

// servePrefix starts the re-recording command of a cassette serve wrote.
const servePrefix = "To re-record: dryfire serve "

// servedCassette is the serve command that recorded file again, "" when
// serve did not record it (or it cannot be read, or may not be, outside
// the project root root: Open says why).
func servedCassette(root, file string) string {
	if file == "" || cassette.CheckPath(root, file) != nil {
		return ""
	}
	c, err := cassette.Load(file)
	if err != nil {
		return ""
	}
	_, cmd, ok := strings.Cut(c.Note, servePrefix)
	if !ok {
		return ""
	}
	return "dryfire serve " + cmd
}

// ErrServed is a run that would record over a cassette dryfire serve
// recorded for another agent.
var ErrServed = errors.New("recorded by dryfire serve")

// checkServed is the case error of a run in mode that would record over
// file (inside the project root root), recorded by dryfire serve, or nil;
// rerecord is how the serve command would record it again (nil when serve
// did not record it).
func checkServed(root, file string, mode cassette.Mode) (rerecord func(cassette.Mode) string, err error) {
	cmd := servedCassette(root, file)
	if cmd == "" {
		return nil, nil
	}
	rerecord = func(m cassette.Mode) string {
		return strings.Replace(cmd, "--record all", "--record "+string(m), 1)
	}
	if mode == cassette.All || mode == cassette.New {
		return rerecord, fmt.Errorf("%s was %w for another agent, and dryfire run --record %s would replace its conversation with this run's: record it again as it was made (%s), or delete the file to record this run's", file, ErrServed, mode, cmd)
	}
	return rerecord, nil
}
