package cassette

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/atomicfile"
)

// The end of a case: its replay problem, stats, the saved cassette and the command that re-records it.

// Problem is the replay problem that failed the case (a request that
// differs from the recording or goes beyond it), or nil.
func (r *Recorder) Problem() *ReplayError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.problem
}

// Failure is why a request could not go live (a missing key), or nil.
func (r *Recorder) Failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failure
}

// Unplayed reports recorded interactions the case did not ask for, once
// it has finished: the agent made fewer model calls than when it was
// recorded. Nil when every interaction was played (or when the case went
// live in New mode).
func (r *Recorder) Unplayed() *ReplayError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.problem != nil || r.tape == nil || r.live || r.next >= len(r.tape.Interactions) {
		return nil
	}
	e := &ReplayError{Kind: Unplayed, File: r.cfg.File, Section: r.cfg.Section, SuiteFile: r.cfg.SuiteFile, Case: r.cfg.Case, Fix: r.cfg.fix(All),
		Request: r.next + 1, Recorded: len(r.tape.Interactions)}
	for i := r.next; i < len(r.tape.Interactions); i++ {
		if len(e.Diffs) == maxDiffs {
			e.More = len(r.tape.Interactions) - i
			break
		}
		rq := &r.tape.Interactions[i].Request
		e.Diffs = append(e.Diffs, "interaction "+itoa(i+1)+": "+rq.Method+" "+rq.Path)
	}
	r.problem = e
	return e
}

// Stats are the interactions replayed, those recorded live, and every
// request that went live (recorded or not).
func (r *Recorder) Stats() (played, recorded, live int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.played, r.recorded, r.liveCalls
}

// Save writes the cassette when this case records one and something new
// was recorded: atomically, so that a reader or a crash never sees half a
// file. Call it only for a case that finished (not one interrupted, nor
// one the infrastructure failed). It reports whether the file was
// written; a file that already holds exactly these bytes is left alone.
func (r *Recorder) Save() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recording || r.cfg.Passthrough || r.problem != nil || r.failure != nil || !r.live {
		return false, nil
	}
	// Again: a symlink made since Open (by the agent program) is not
	// written through.
	if err := CheckPath(r.cfg.root(), r.cfg.File); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	c := r.merged()
	data := c.Marshal()
	if old, err := os.ReadFile(r.cfg.File); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(r.cfg.File), 0o755); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	if err := atomicfile.Write(r.cfg.File, data, 0o644); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	return true, nil
}

// merged is the cassette Save writes: this recorder's section, and the
// other part of the file as it is now (the other recorder of the case may
// have saved it since Open).
func (r *Recorder) merged() *Cassette {
	old, err := Load(r.cfg.File)
	if err != nil || old.Case != r.cfg.Case {
		old = nil
	}
	if r.cfg.Section != UserSection {
		c := &Cassette{
			Suite:        filepath.Base(r.cfg.SuiteFile),
			Case:         r.cfg.Case,
			Note:         r.note(),
			Rules:        r.rules,
			Match:        r.set.Rules(),
			Interactions: r.out,
		}
		if old != nil && !r.cfg.DropUser {
			c.User = old.User
		}
		return c
	}
	c := &Cassette{Suite: filepath.Base(r.cfg.SuiteFile), Case: r.cfg.Case, Note: r.note()}
	if old != nil {
		c.Note, c.Rules, c.Match, c.Interactions = old.Note, old.Rules, old.Match, old.Interactions
	}
	c.User = &Part{Rules: r.rules, Interactions: r.out}
	return c
}

func (r *Recorder) note() string {
	from := cmp.Or(r.host, "the live API")
	if r.cfg.Rerecord != nil && r.cfg.RecordedBy != "" {
		return "Recorded by " + r.cfg.RecordedBy + " from " + from + " for the agent that called it; " + r.cfg.RecordedBy + " replays it offline. To re-record: " + r.cfg.Rerecord(All)
	}
	if r.cfg.Rerecord != nil {
		return "Recorded by dryfire from " + from + "; the test replays it offline. To re-record: " + r.cfg.Rerecord(All)
	}
	return "Recorded by dryfire from " + from + "; dryfire run replays it offline. To re-record, in the suite's directory: " +
		rerecord(filepath.Base(r.cfg.SuiteFile), r.cfg.Case) + r.cfg.trialsFlag()
}

// trialsFlag is " --trials N" for a case of several trials.
func (cfg *Config) trialsFlag() string {
	if cfg.Trials > 1 {
		return " --trials " + itoa(cfg.Trials)
	}
	return ""
}

// rerecord is the command that records one case again. It is one line
// whatever the names hold: the message it is in is split at its newlines
// (and a line of a CI log can be a workflow command).
func rerecord(suiteFile, name string) string {
	return "dryfire run " + shellQuote(suiteFile) + " --filter " + shellQuote("^"+quoteMeta(name)+"$") + " --record all"
}

// quoteMeta is regexp.QuoteMeta with the control characters written as
// RE2 escapes (\x{1b}, \x{a}): the pattern matches the name and prints on
// one line.
func quoteMeta(s string) string {
	q := regexp.QuoteMeta(s)
	if !strings.ContainsFunc(q, isControl) {
		return q
	}
	var b strings.Builder
	for _, r := range q {
		if isControl(r) {
			fmt.Fprintf(&b, `\x{%x}`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029'
}

var shellSafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`) })

// shellQuote quotes s for a POSIX shell when it needs it; a filter is
// always quoted. A control character (a newline in a file name) is
// written as an escape of $'...' quoting, so that the command stays on
// one line.
func shellQuote(s string) string {
	if shellSafe().MatchString(s) && !strings.HasPrefix(s, "-") {
		return s
	}
	if strings.ContainsFunc(s, isControl) {
		var b strings.Builder
		b.WriteString("$'")
		for _, r := range s {
			switch {
			case r == '\'' || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case isControl(r) && r < 0x80:
				fmt.Fprintf(&b, `\x%02x`, r)
			case isControl(r):
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('\'')
		return b.String()
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
