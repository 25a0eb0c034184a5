package runner

import (
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/report"
)

// MaxTrials bounds the trials of a case, as the suite schema does.
const MaxTrials = 1000

// trialsOf is how often a case runs: the run's --trials, else the case's
// trials: (caseTrials), else the suite's, else once.
func trialsOf(runTrials int, s *spec.Suite, caseTrials int) int {
	switch {
	case runTrials > 0:
		return runTrials
	case caseTrials > 0:
		return caseTrials
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
