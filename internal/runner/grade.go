package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/report"
)

// Bounds of what a judge reads: each tool result and argument list is cut
// at maxJudgeItem bytes, the whole conversation at maxJudgeConversation.
const (
	maxJudgeItem         = 4000
	maxJudgeConversation = 100_000
)

// judgeSystem is the system prompt of every judge request. Changing it
// changes every recorded judge request: their cassettes must be
// recorded again.
const judgeSystem = `You are a strict, fair judge of an AI agent's work. You are given a rubric and a conversation between a user and the agent, with the tool calls the agent made and what they returned. Grade the agent against the rubric only.

Answer with one JSON object and nothing else:
{"pass": true or false, "score": a number from 0 to 1, "reasoning": "one or two sentences on why"}`

// JudgeCassette is the cassette of the judge check with the given index
// (spec.Judge.Index) of the case (or trial) whose cassette is file:
// FILE.judge-N.json, beside it.
func JudgeCassette(file string, index int) string {
	return strings.TrimSuffix(file, ".json") + ".judge-" + strconv.Itoa(index) + ".json"
}

// judgeFile is the cassette of a job's judge check.
func (j job) judgeFile(jd *spec.Judge) string {
	return JudgeCassette(TrialCassette(j.plan.Cassette(), j.trial), jd.Index)
}

// grader asks a case's judge checks for their verdicts, through their
// cassettes; nil for a case that has none.
type grader struct {
	ctx context.Context
	lv  *live
}

// judges are the judge checks of a case.
func judges(c *spec.Case) []*spec.Judge {
	var out []*spec.Judge
	for _, ch := range c.Expect {
		if ch.Kind == spec.CheckJudge && ch.Judge != nil {
			out = append(out, ch.Judge)
		}
	}
	return out
}

// verdicts asks each judge check of the case once, in order. A judge
// whose cassette cannot be opened or whose live call failed errs the
// case (the error); a request that strays from its recording, or an
// answer that is not a verdict, fails its check (the verdict's Problem).
// The judges' cassettes are saved as they are answered, and noted.
func (g *grader) verdicts(j job, c *report.Case) (map[int]*check.Verdict, error) {
	js := judges(j.c)
	if len(js) == 0 || g == nil {
		return nil, nil
	}
	prompt := judgeConversation(j.c.Input, c)
	out := make(map[int]*check.Verdict, len(js))
	for _, jd := range js {
		v, err := g.ask(j, c, jd, prompt)
		if err != nil {
			return nil, err
		}
		out[jd.Index] = v
	}
	return out, nil
}

func (g *grader) ask(j job, c *report.Case, jd *spec.Judge, conversation string) (*check.Verdict, error) {
	file := j.judgeFile(jd)
	m, rec, err := sideModel(j, g.lv, file, cassette.AgentSection, jd.Provider, jd.Model, jd.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("judge %d: %w", jd.Index, err)
	}
	resp, err := m.Generate(g.ctx, &model.Request{
		Model:    jd.Model,
		System:   judgeSystem,
		Messages: []model.Message{{Role: model.User, Text: "The rubric:\n" + jd.Rubric + "\n\nThe conversation:\n" + conversation}},
	})
	out := rec.End()
	if p := replayError(out.Replay); p != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("judge %d: %s", jd.Index, p.Error()))
		return &check.Verdict{Problem: "its request differs from its recording in " + file + " (" + p.Summary() + "; the note says how to record it again)"}, nil
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, errors.New("interrupted")
		}
		return nil, fmt.Errorf("judge %d (%s %s): %w", jd.Index, jd.Provider, jd.Model, err)
	}
	report.AddUsage(c, "judge", report.Usage(resp.Usage))
	c.Live += out.Sent
	if wrote, err := rec.Save(); err != nil {
		return nil, fmt.Errorf("judge %d: its cassette could not be saved: %w", jd.Index, err)
	} else if wrote {
		c.Notes = append(c.Notes, fmt.Sprintf("recorded the judge's model call into %s", file))
	}
	return parseVerdict(resp.Text), nil
}

// sideModel is a model a case uses besides its agent's (a judge's, a
// simulated user's), its calls recorded into a cassette of their own,
// file, in the run's record mode.
func sideModel(j job, lv *live, file string, section cassette.Section, prov, name, baseURL string) (model.Model, *modelserver.Endpoint, error) {
	return recordedModel(j, lv, file, prov, name, baseURL, func(eo *modelserver.Options, _ *wire.Options) {
		eo.Section, eo.Rerecord, eo.RecordedBy = section, nil, ""
	})
}

// parseVerdict reads a judge's answer: a JSON object {pass, score,
// reasoning}, alone or among other text (a code fence, a sentence
// before it); the first object that parses is the verdict.
func parseVerdict(text string) *check.Verdict {
	for i := strings.IndexByte(text, '{'); i >= 0; {
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var raw struct {
			Pass      *bool    `json:"pass"`
			Score     *float64 `json:"score"`
			Reasoning string   `json:"reasoning"`
		}
		if err := dec.Decode(&raw); err == nil && (raw.Pass != nil || raw.Score != nil) {
			v := &check.Verdict{Score: raw.Score, Reasoning: strings.TrimSpace(raw.Reasoning)}
			if raw.Pass != nil {
				v.Pass = *raw.Pass
			} else {
				v.Pass = *raw.Score >= 0.5
			}
			if v.Score != nil && (*v.Score < 0 || *v.Score > 1) {
				return &check.Verdict{Problem: fmt.Sprintf("its score %s is not between 0 and 1", strconv.FormatFloat(*v.Score, 'g', -1, 64))}
			}
			return v
		}
		next := strings.IndexByte(text[i+1:], '{')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return &check.Verdict{Problem: `its answer is not a verdict (a JSON object {"pass": true or false, "score": 0 to 1, "reasoning": "..."}): ` + strconv.Quote(cutText(text, 300))}
}

// judgeConversation is the case as a judge reads it: the user's input,
// each tool call with its arguments and result, the agent's answer.
func judgeConversation(input string, c *report.Case) string {
	var b strings.Builder
	calls := c.ToolCalls
	// The calls made up to model turn upTo, not yet written: the agent's
	// (users false) or, before a user's message, the simulated user's
	// own (dual control), which come after the agent's reply.
	writeCalls := func(upTo int, users bool) {
		for len(calls) > 0 && (upTo < 0 || calls[0].Turn <= upTo) && (calls[0].Actor != "") == users {
			tc := calls[0]
			calls = calls[1:]
			result := "returned"
			if tc.IsError {
				result = "returned an error"
			}
			who := fmt.Sprintf("agent, turn %d", tc.Turn)
			if users {
				who = "user, as " + tc.Actor
			}
			fmt.Fprintf(&b, "[%s] called %s %s; it %s: %s\n", who, tc.Tool, cutText(string(tc.Args), maxJudgeItem), result, cutText(tc.Result, maxJudgeItem))
		}
	}
	if c.Conversation == nil {
		b.WriteString("[user] " + input + "\n")
		writeCalls(-1, false)
		b.WriteString("[agent] " + c.Output + "\n")
		return cutText(b.String(), maxJudgeConversation)
	}
	replied := 0 // the model turn of the last reply
	for _, m := range c.Conversation {
		if m.Role == "user" {
			if m.Turn > 1 {
				writeCalls(replied, true)
			}
			b.WriteString("[user] " + m.Text + "\n")
			continue
		}
		replied = m.ModelTurn
		writeCalls(m.ModelTurn, false)
		b.WriteString("[agent] " + m.Text + "\n")
	}
	writeCalls(-1, false)
	return cutText(b.String(), maxJudgeConversation)
}

// cutText is s cut at n bytes (on a rune boundary), saying how much was
// left out.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}
