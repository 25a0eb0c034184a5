package runner

import (
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// MaxTrials bounds the trials of a case, as the suite schema does.
const MaxTrials = 1000

// trialsOf is how often a case runs: the run's --trials, else the case's
// trials:, else the suite's, else once.
func trialsOf(opts Options, s *spec.Suite, c *spec.Case) int {
	switch {
	case opts.Trials > 0:
		return opts.Trials
	case c.Trials > 0:
		return c.Trials
	case s.Trials > 0:
		return s.Trials
	}
	return 1
}

// TrialCassette is the cassette of trial k (1-based) of a case whose
// cassette is file: the file itself for the first trial (so that a
// recorded case keeps its recording when it gains trials), FILE.trial-K.json
// after it. A slug has no dot, so no case's file is another's trial.
func TrialCassette(file string, k int) string {
	if k <= 1 || file == "" {
		return file
	}
	return strings.TrimSuffix(file, ".json") + ".trial-" + strconv.Itoa(k) + ".json"
}

// expandTrials gives each trial of each case a job of its own (its own
// cassette and agent.command scope), in case order then trial order;
// cases[i] is the job range of case i.
func expandTrials(jobs []job, opts Options) ([]job, []trialRange) {
	out := make([]job, 0, len(jobs))
	cases := make([]trialRange, len(jobs))
	for i, j := range jobs {
		n := trialsOf(opts, j.suite, j.c)
		cases[i] = trialRange{first: len(out), n: n}
		for k := 1; k <= n; k++ {
			t := j
			t.cassette = TrialCassette(j.cassette, k)
			if n > 1 {
				t.trial, t.trials = k, n
			}
			t.id = strconv.Itoa(len(out) + 1)
			out = append(out, t)
		}
	}
	return out, cases
}

// trialRange is where the trials of one case are among the run's jobs.
type trialRange struct{ first, n int }

// foldCase is the result of a case from its trials' results: the one
// result itself when it ran once (the report of a run without trials is
// what it always was).
func foldCase(runs []report.Case, threshold float64) report.Case {
	if len(runs) == 1 {
		return runs[0]
	}
	if threshold <= 0 {
		threshold = 1
	}
	c := report.FoldTrials(runs, threshold)
	if c.Verdict != "" {
		c.Verdict = c.Status
	}
	return c
}
