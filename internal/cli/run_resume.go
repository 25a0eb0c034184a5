package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// A run cut off resumes: run --journal FILE keeps each case as it
// finishes, run --resume FILE runs only what the journal does not hold
// (docs/running.md#resuming-a-run-cut-off).

func addResumeFlags(f *pflag.FlagSet, o *runOptions) {
	f.StringVar(&o.journal, "journal", "", "keep a journal of the cases as they finish in `FILE` (a new file), synced as it grows, so that a run cut off (a timeout, a reclaimed machine, SIGKILL) resumes with --resume FILE")
	f.StringVar(&o.resume, "resume", "", "resume the run whose journal is `FILE`: run only the cases it does not hold finished (or holds as infrastructure errors), append them to it, and report the whole run as if it had not stopped")
}

// openJournal opens --journal or --resume, saying on stderr what a
// resumed journal holds.
func openJournal(e *env, o runOptions) (*dryfire.Journal, error) {
	path, resume := o.journal, false
	switch {
	case o.journal != "" && o.resume != "":
		return nil, usageErr("give --journal FILE (a new journal) or --resume FILE (go on with one), not both")
	case o.resume != "":
		path, resume = o.resume, true
	case path == "":
		return nil, nil
	}
	if o.watch {
		return nil, usageErr("--watch runs again and again: it keeps no journal")
	}
	j, err := dryfire.OpenJournal(path, resume, buildID())
	if err != nil {
		flag := "--journal"
		if resume {
			flag = "--resume"
		}
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: %w; nothing ran", flag, err)}
	}
	j.OnResume(func(n int, torn bool) {
		msg := fmt.Sprintf("dryfire: --resume %s: %s finished before, not run again", path, termtext.Count(n, "case"))
		if torn {
			msg += " (its last record was cut short by the crash: that case runs again)"
		}
		fmt.Fprintln(e.stderr, msg)
	})
	return j, nil
}

// closeJournal syncs and closes the journal, if any (once: later calls
// do nothing).
func closeJournal(e *env, j *dryfire.Journal) error {
	if j == nil {
		return nil
	}
	full, err := j.Close()
	if full {
		fmt.Fprintln(e.stderr, "dryfire: the journal reached its bound of 1 GiB: the cases that finished after it are not in it (a resume runs them again)")
	}
	if err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	return nil
}
