package check

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

// CommandRun is how a command check's command ran (the runner runs it
// after the agent's program, in the case's workspace).
type CommandRun struct {
	ExitCode int    // -1: it did not exit by itself
	Output   string // standard output and error, at most MaxCommandOutput bytes (its end)
	Cut      bool   // the output was longer: its end is kept
	Problem  string // why it did not run to its end (killed at its timeout, could not start); "" when it did
}

// MaxCommandOutput bounds the output of a command check's command kept
// for the check; CommandTail bounds what its message shows of it (bytes).
const (
	MaxCommandOutput = 64 << 10
	CommandTail      = 2000
)

func commandCheck(c *spec.Check, f *Facts) (bool, string) {
	r := f.Commands[c]
	if r == nil {
		return false, "`" + c.Run + "` was not run: the agent's program did not finish"
	}
	var b strings.Builder
	b.WriteString("`" + c.Run + "` ")
	ok := r.Problem == "" && r.ExitCode == c.ExitCode
	switch {
	case r.Problem != "":
		b.WriteString(r.Problem)
	case ok:
		fmt.Fprintf(&b, "exited %d (expected %d)", r.ExitCode, c.ExitCode)
	default:
		fmt.Fprintf(&b, "exited %d; expected %d", r.ExitCode, c.ExitCode)
	}
	if ok && c.Contains != nil && !strings.Contains(r.Output, *c.Contains) {
		ok = false
		b.WriteString("; its output does not contain " + strconv.Quote(*c.Contains))
	}
	if ok && c.Regex != nil && !c.Regex.MatchString(r.Output) {
		ok = false
		b.WriteString("; its output does not match " + strconv.Quote(c.Regex.String()))
	}
	b.WriteString(tailOf(r))
	return ok, b.String()
}

// tailOf is the end of a command's output for the message, quoted: its
// last CommandTail bytes.
func tailOf(r *CommandRun) string {
	out := strings.TrimRight(r.Output, "\n")
	switch {
	case out == "":
		return "; no output"
	case len(out) > CommandTail || r.Cut:
		cut := len(out) - CommandTail
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		return "; its output ends " + strconv.Quote("…"+out[cut:])
	}
	return "; its output: " + strconv.Quote(out)
}
