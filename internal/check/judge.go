package check

import (
	"fmt"
	"strconv"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Verdict is what a judge check's model answered, or why it answered
// nothing: the runner asks the model (recorded and replayed like the
// agent's) before the checks are evaluated.
type Verdict struct {
	// Pass and Score are the verdict: Score from 0 to 1, nil when the
	// judge gave none.
	Pass      bool
	Score     *float64
	Reasoning string
	// Problem, when set, is why there is no verdict (the answer was not
	// one, the judge's request strayed from its recording, the run ended
	// before it could be judged); the check fails with it.
	Problem string
}

// judge is a judge check's result from its verdict (Facts.Verdicts).
func judge(c *spec.Check, f *Facts) (bool, string) {
	j := c.Judge
	if j == nil {
		return false, "the judge check is not valid"
	}
	who := "the judge (" + j.Provider + " " + j.Model + ")"
	rubric := "against the rubric " + value.Truncate(strconv.Quote(j.Rubric), 200)
	v := f.Verdicts[j.Index]
	switch {
	case v == nil:
		return false, "expected a verdict from " + who + "; it was not asked"
	case v.Problem != "":
		return false, "expected a verdict from " + who + "; it gave none: " + v.Problem
	case j.Threshold != nil && v.Score == nil:
		return false, fmt.Sprintf("expected %s to score the answer at least %s %s; it gave no score: %s", who, num(*j.Threshold), rubric, reason(v))
	case j.Threshold != nil && *v.Score >= *j.Threshold:
		return true, fmt.Sprintf("%s scored the answer %s, at least the threshold %s: %s", who, num(*v.Score), num(*j.Threshold), reason(v))
	case j.Threshold != nil:
		return false, fmt.Sprintf("expected %s to score the answer at least %s %s; it scored %s: %s", who, num(*j.Threshold), rubric, num(*v.Score), reason(v))
	}
	score := ""
	if v.Score != nil {
		score = " (score " + num(*v.Score) + ")"
	}
	if v.Pass {
		return true, fmt.Sprintf("%s passed the answer%s: %s", who, score, reason(v))
	}
	return false, fmt.Sprintf("expected %s to pass the answer %s; it failed it%s: %s", who, rubric, score, reason(v))
}

func reason(v *Verdict) string {
	if v.Reasoning == "" {
		return "(no reasoning given)"
	}
	return v.Reasoning
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
