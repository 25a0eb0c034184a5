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

// The end of a case: the interactions it left unplayed, the saved cassette and the command that re-records it.

// unplayed reports recorded interactions the case did not ask for, once
// it has finished: the agent made fewer model calls than when it was
// recorded. Nil when every interaction was played (or when the case went
// live in New mode). Call it with a.mu held.
func (a *Answerer) unplayed() *ReplayError {
	if a.problem != nil || a.tape == nil || a.live || a.next >= len(a.tape.Interactions) {
		return nil
	}
	e := &ReplayError{Kind: Unplayed, File: a.cfg.File, Section: a.cfg.Section, Fix: a.cfg.fix(All),
		Request: a.next + 1, Recorded: len(a.tape.Interactions)}
	for i := a.next; i < len(a.tape.Interactions); i++ {
		if len(e.Diffs) == maxDiffs {
			e.More = len(a.tape.Interactions) - i
			break
		}
		rq := &a.tape.Interactions[i].Request
		e.Diffs = append(e.Diffs, "interaction "+itoa(i+1)+": "+rq.Method+" "+rq.Path)
	}
	a.problem = e
	return e
}

// Save implements model.Answerer, once the live answers have passed: it
// writes the cassette when this case records one and something new was
// recorded, atomically, so that a reader or a crash never sees half a
// file. Call it only for a case that finished (not one interrupted, nor
// one the infrastructure failed). It reports whether the file was
// written; a file that already holds exactly these bytes is left alone.
func (a *Answerer) Save() (bool, error) {
	a.flight.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.records || a.problem != nil || a.failure != nil || !a.live {
		return false, nil
	}
	// Again: a symlink made since Open (by the agent program) is not
	// written through.
	if err := CheckPath(a.cfg.root(), a.cfg.File); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	c := a.merged()
	data := c.Marshal()
	if old, err := os.ReadFile(a.cfg.File); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(a.cfg.File), 0o755); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	if err := atomicfile.Write(a.cfg.File, data, 0o644); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	return true, nil
}

// merged is the cassette Save writes: this recorder's section, and the
// other part of the file as it is now (the other recorder of the case may
// have saved it since Open).
func (a *Answerer) merged() *Cassette {
	old, err := Load(a.cfg.File)
	if err != nil || old.Case != a.cfg.Case {
		old = nil
	}
	if a.cfg.Section != UserSection {
		c := &Cassette{
			Suite:        filepath.Base(a.cfg.SuiteFile),
			Case:         a.cfg.Case,
			Note:         a.note(),
			Rules:        a.rules,
			Match:        a.set.Rules(),
			Interactions: a.out,
		}
		if old != nil && !a.cfg.DropUser {
			c.User = old.User
		}
		return c
	}
	c := &Cassette{Suite: filepath.Base(a.cfg.SuiteFile), Case: a.cfg.Case, Note: a.note()}
	if old != nil {
		c.Note, c.Rules, c.Match, c.Interactions = old.Note, old.Rules, old.Match, old.Interactions
	}
	c.User = &Part{Rules: a.rules, Interactions: a.out}
	return c
}

func (a *Answerer) note() string {
	from := cmp.Or(a.host, "the live API")
	if a.cfg.Rerecord != nil && a.cfg.RecordedBy != "" {
		return "Recorded by " + a.cfg.RecordedBy + " from " + from + " for the agent that called it; " + a.cfg.RecordedBy + " replays it offline. To re-record: " + a.cfg.Rerecord(All)
	}
	if a.cfg.Rerecord != nil {
		return "Recorded by dryfire from " + from + "; the test replays it offline. To re-record: " + a.cfg.Rerecord(All)
	}
	return "Recorded by dryfire from " + from + "; dryfire run replays it offline. To re-record, in the suite's directory: " +
		rerecord(filepath.Base(a.cfg.SuiteFile), a.cfg.Case) + a.cfg.trialsFlag()
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
