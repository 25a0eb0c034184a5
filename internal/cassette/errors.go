package cassette

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/termtext"
)

func itoa(n int) string { return strconv.Itoa(n) }

// permanent, in each of the errors of this package, implements
// wire.Permanent: retrying cannot help.
type permanent struct{}

func (permanent) Permanent() bool { return true }

// Kind of a replay problem.
type Kind int

const (
	// Mismatch: a request differs from the recorded one in its place.
	Mismatch Kind = iota
	// Beyond: a request past the end of the recording.
	Beyond
	// Unplayed: recorded interactions the case never asked for.
	Unplayed
	// NoMatch: a request that no recorded interaction answers, in any
	// order (Index); Request is then the closest recorded one (0: none).
	NoMatch
)

// ReplayError is a case whose requests do not follow its recording: the
// agent behaved differently, so the case fails.
type ReplayError struct {
	permanent
	Kind     Kind
	File     string // the cassette
	Section  Section
	Request  int      // the request concerned (1-based); Unplayed: the first unplayed
	Recorded int      // interactions in the recording
	Diffs    []string // the first differences (Mismatch), the request (Beyond), the unplayed interactions
	More     int      // differences or interactions not listed
	Fix      string   // how to record the case again
	// Presets are the match presets that would have matched the values
	// that differ (Mismatch, NoMatch; only when no rules were declared).
	Presets []string
}

// Summary is the problem in one line.
func (e *ReplayError) Summary() string {
	who, in := "model request", e.File
	if e.Section == UserSection {
		who, in = "the simulated user's model request", e.File+" (the simulated user's part)"
	}
	switch e.Kind {
	case Mismatch:
		return fmt.Sprintf("%s %d differs from the recording in %s", who, e.Request, in)
	case Beyond:
		return fmt.Sprintf("%s %d goes beyond the recording in %s, which holds %s", who, e.Request, in, termtext.Count(e.Recorded, "interaction"))
	case NoMatch:
		if e.Request == 0 {
			return fmt.Sprintf("no interaction recorded in %s answers this model request", in)
		}
		return fmt.Sprintf("no interaction recorded in %s answers this model request; the closest, interaction %d of %d, differs", in, e.Request, e.Recorded)
	}
	n := e.Recorded - e.Request + 1
	return fmt.Sprintf("%d of %s recorded in %s %s not played", n, termtext.Count(e.Recorded, "interaction"), in, map[bool]string{true: "was", false: "were"}[n == 1])
}

// Error is the summary, the differences, and what to do.
func (e *ReplayError) Error() string {
	var b strings.Builder
	b.WriteString(e.Summary())
	b.WriteString(":\n")
	for _, d := range e.Diffs {
		b.WriteString("  " + d + "\n")
	}
	if e.More > 0 {
		what := "difference"
		if e.Kind == Unplayed {
			what = "interaction"
		}
		if e.More > 1 {
			what += "s"
		}
		fmt.Fprintf(&b, "  … and %d more %s\n", e.More, what)
	}
	if len(e.Presets) > 0 {
		b.WriteString("if these values change on every run, declare a match rule that normalises them in both requests (under the suite, agent or case):\n  match:\n    normalize: [")
		for i, p := range e.Presets {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("{preset: " + p + "}")
		}
		b.WriteString("]\notherwise, ")
	}
	who := "the agent"
	if e.Section == UserSection {
		who = "the simulated user"
	}
	switch e.Kind {
	case Mismatch, NoMatch:
		b.WriteString(who + " sent something else than when the case was recorded; if that is intended, re-record the case:\n")
	case Beyond:
		b.WriteString(who + " made more model calls than when the case was recorded; if that is intended, re-record the case (or record only the new calls with --record new):\n")
	case Unplayed:
		b.WriteString(who + " made fewer model calls than when the case was recorded; if that is intended, re-record the case:\n")
	}
	b.WriteString("  " + e.Fix)
	return b.String()
}

// MissingError is a case with no cassette in None mode.
type MissingError struct {
	permanent
	File string
	Fix  string // how to record it
	// Section is the part that is missing (the file may exist, recorded
	// before the case had a model-driven user).
	Section Section
}

func (e *MissingError) Error() string {
	if e.Section == UserSection {
		return fmt.Sprintf("no recording of the simulated user: %s holds none, and --record none (the default when CI is set) only replays; record it, with the user model's key set, with: %s",
			e.File, e.Fix)
	}
	return fmt.Sprintf("no cassette for this case: %s does not exist, and --record none (the default when CI is set) only replays; record it, with the provider's key set, with: %s",
		e.File, e.Fix)
}

// FileError is a cassette file that cannot be used.
type FileError struct {
	permanent
	File string
	Msg  string
	Fix  string // a command that fixes it, if any
}

func (e *FileError) Error() string {
	s := "cassette " + e.File + ": " + e.Msg
	if e.Fix != "" {
		s += "; re-record it with: " + e.Fix
	} else {
		s += "; fix it, or delete it and record the case again"
	}
	return s
}

// PassthroughError is a passthrough case asked to replay.
type PassthroughError struct{ permanent }

func (e *PassthroughError) Error() string {
	return "this case runs passthrough code (impl), so it is never recorded into a cassette and always calls the live model; --record none (the default when CI is set) only replays: run it with --record once and the provider's key set"
}

// LiveError is a request that would go live but may not.
type LiveError struct {
	permanent
	File        string
	Section     Section
	Request     int
	Passthrough bool
	Why         string
}

func (e *LiveError) Error() string {
	if e.Passthrough {
		return fmt.Sprintf("model request %d must go to the live model (this case runs passthrough code, so it is never recorded), but %s", e.Request, e.Why)
	}
	if e.Section == UserSection {
		return fmt.Sprintf("the simulated user's model request %d is not in the recording %s (the simulated user's part), so it must go to the live model, but %s", e.Request, e.File, e.Why)
	}
	return fmt.Sprintf("model request %d is not in the recording %s, so it must go to the live model, but %s", e.Request, e.File, e.Why)
}

// Error codes of the answers dryfire gives instead of the model's (the
// OpenAI body's "code", Gemini's reason; the Anthropic body has none, its
// message says the same): each error's Code (model.Coded).
const (
	CodeMismatch    = "dryfire_cassette_mismatch"   // the request differs from the recorded one
	CodeBeyond      = "dryfire_cassette_beyond"     // more requests than recorded
	CodeNoCassette  = "dryfire_no_cassette"         // mode none and no cassette
	CodeBadCassette = "dryfire_cassette_unreadable" // not a cassette of this case
	CodeNoLive      = "dryfire_live_unavailable"    // would go live, but may not (no key, mode none)
)

// Code implements model.Coded: a request that differs names the field.
func (e *ReplayError) Code() (string, string) {
	if e.Kind == Beyond {
		return CodeBeyond, ""
	}
	if (e.Kind == Mismatch || e.Kind == NoMatch) && len(e.Diffs) > 0 {
		return CodeMismatch, param(e.Diffs[0])
	}
	return CodeMismatch, ""
}

// param is the field a difference is about, as an OpenAI error names it:
// "$.messages[1].content: recorded …" is messages[1].content.
func param(diff string) string {
	p, ok := strings.CutPrefix(diff, "$")
	if !ok {
		return ""
	}
	p, _, _ = strings.Cut(p, ": recorded ")
	return strings.TrimPrefix(p, ".")
}

// Code implements model.Coded.
func (e *MissingError) Code() (string, string)     { return CodeNoCassette, "" }
func (e *FileError) Code() (string, string)        { return CodeBadCassette, "" }
func (e *LiveError) Code() (string, string)        { return CodeNoLive, "" }
func (e *PassthroughError) Code() (string, string) { return CodeNoLive, "" }
