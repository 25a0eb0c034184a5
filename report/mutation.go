package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// CaseMutation is what run --mutate found of a passing case: its stored
// transcript mutated (a call dropped, made twice, two swapped, an
// argument changed, a number of the output changed, a world record
// changed) and its checks applied again to each mutant, as recheck does.
type CaseMutation struct {
	Mutants int `json:"mutants"`
	// Caught counts the mutants that made a check fail.
	Caught int `json:"caught"`
	// Survived says what each mutant no check caught changed.
	Survived []string `json:"survived,omitempty"`
	// Unfailed are the checks no mutant made fail, each "CHECK (AT)".
	Unfailed []string `json:"unfailed,omitempty"`
	// Untried counts the mutants past the bound of one case (256), not
	// tried.
	Untried int `json:"untried,omitempty"`
}

// MutationScore is one suite's mutants and how many its checks caught.
type MutationScore struct {
	Suite   string  `json:"suite"`
	Mutants int     `json:"mutants"`
	Caught  int     `json:"caught"`
	Score   float64 `json:"score"` // percent of the mutants caught, down to a tenth
}

// mutationTotals add up the cases' mutations by suite, in report order.
type mutationTotals struct {
	scores   []MutationScore
	at       map[string]int
	unfailed [][]string // by suite: "CASE: CHECK (AT)"
}

func (m *mutationTotals) add(c *Case) {
	cm := c.Mutation
	if cm == nil {
		return
	}
	if m.at == nil {
		m.at = map[string]int{}
	}
	i, ok := m.at[c.Suite]
	if !ok {
		i = len(m.scores)
		m.at[c.Suite] = i
		m.scores = append(m.scores, MutationScore{Suite: c.Suite})
		m.unfailed = append(m.unfailed, nil)
	}
	s := &m.scores[i]
	s.Mutants += cm.Mutants
	s.Caught += cm.Caught
	s.Score = 100
	if s.Caught < s.Mutants {
		s.Score = math.Floor(float64(s.Caught)*1000/float64(s.Mutants)) / 10
	}
	for _, u := range cm.Unfailed {
		m.unfailed[i] = append(m.unfailed[i], c.Name+": "+u)
	}
}

// Mutation is the suites' mutation scores, in report order; nil when no
// case was mutated.
func (t *Totals) Mutation() []MutationScore { return t.mutation.scores }

// maxUnfailedLines bounds the checks the text lists as never failed.
const maxUnfailedLines = 50

// MutationText is the lines a run with --mutate prints before its last:
// each suite's score, then the checks no mutant made fail.
func (t *Totals) MutationText() string {
	m := &t.mutation
	if m.scores == nil {
		return ""
	}
	var b strings.Builder
	listed := 0
	for i, s := range m.scores {
		fmt.Fprintf(&b, "mutation: %s: %d of %d mutants caught (%.1f%%)\n", termtext.Printable(s.Suite), s.Caught, s.Mutants, s.Score)
		for k, u := range m.unfailed[i] {
			if listed == maxUnfailedLines {
				fmt.Fprintf(&b, "  … and %d more checks of it no mutant made fail (the JSON report lists them)\n", len(m.unfailed[i])-k)
				break
			}
			listed++
			fmt.Fprintf(&b, "  no mutant made it fail: %s\n", termtext.Printable(u))
		}
	}
	return b.String()
}
