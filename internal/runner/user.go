package runner

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// userSystem opens the system prompt of a model-driven user; the case's
// instructions follow it. Changing it changes every recorded request of
// a simulated user.
const userSystem = `You are playing the user in a conversation with an AI agent, to test the agent. Stay in your role: write only your next message to the agent, as the user would, with no commentary.

Who you are and what you want:
`

// userFile is the cassette that holds a job's model-driven user's calls:
// the case's (or trial's) own, in a part apart from the agent's.
func (j job) userFile() string {
	return TrialCassette(j.plan.Cassette(), j.trial)
}

// simUser is a case's simulated user (user:): it says the next message
// after each of the agent's replies, from its scripted turns or from its
// model, and keeps the conversation for the report.
type simUser struct {
	u     *spec.User
	notes *[]string
	// Scripted: the next turn to consider.
	next int
	// Model-driven: its model, through the user's part of the case's
	// cassette.
	m     model.Model
	rec   *modelserver.Endpoint
	file  string
	said  int
	usage model.Usage      // what the user's model spent
	conv  []agent.Exchange // the conversation so far, as the user saw it
	// act makes one of the user's world calls (do:) through the case's
	// record, as the agent's calls are made; nil outside world suites.
	act func(ctx context.Context, c tool.Call, req world.Request)
}

// userActs is how a simulated user's world calls reach the drill's
// world: through rec, the record of the agent's calls (the built-in
// loop's), as a world operation by the turn's actor.
func userActs(rec *tool.Recorder, in *world.Instance) func(context.Context, tool.Call, world.Request) {
	if in == nil {
		return nil
	}
	return func(ctx context.Context, c tool.Call, req world.Request) {
		rec.CallOn(ctx, c, func() tool.Answerer { return &world.Op{In: in, Req: req} })
	}
}

// newSimUser is the simulated user of a job; nil when the case has none.
// A model-driven user's cassette that cannot be opened is the error.
func newSimUser(j job, lv *live, notes *[]string) (*simUser, error) {
	u := j.c.User
	if u == nil {
		return nil, nil
	}
	s := &simUser{u: u, notes: notes, conv: []agent.Exchange{{User: j.c.Input}}}
	if u.Model == nil {
		return s, nil
	}
	um := u.Model
	s.file = j.userFile()
	m, rec, err := sideModel(j, lv, s.file, cassette.UserSection, um.Provider, um.Model, um.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("the simulated user: %w", err)
	}
	s.m, s.rec = m, rec
	return s, nil
}

// Next implements agent.User.
func (s *simUser) Next(ctx context.Context, reply string, turn int) (string, bool, error) {
	s.conv[len(s.conv)-1].Reply = reply
	msg, ok, err := s.say(ctx, reply, turn)
	if ok && err == nil {
		s.conv = append(s.conv, agent.Exchange{User: msg})
	}
	return msg, ok, err
}

func (s *simUser) say(ctx context.Context, reply string, turn int) (string, bool, error) {
	if s.m == nil {
		for s.next < len(s.u.Script) {
			t := s.u.Script[s.next]
			s.next++
			if t.When != nil && !t.When.MatchString(reply) {
				*s.notes = append(*s.notes, fmt.Sprintf("user turn %d (%s) was skipped: the agent's reply does not match /%s/", s.next, t.Pos.FileLine(), t.When))
				continue
			}
			// Dual control: the user acts on its side of the world, then
			// says what it did.
			for _, a := range t.Do {
				if s.act == nil || ctx.Err() != nil {
					break
				}
				s.act(ctx, tool.Call{Name: a.Name(), Args: a.Args, Turn: turn, Actor: t.Actor},
					world.Request{Operation: a.Operation, Tool: a.Tool, Arguments: a.Args, Actor: t.Actor})
			}
			return t.Say, true, nil
		}
		return "", false, nil
	}
	um := s.u.Model
	if s.said >= um.MaxTurns {
		return "", false, nil
	}
	var b strings.Builder
	for _, x := range s.conv {
		b.WriteString("[you] " + x.User + "\n")
		if x.Reply != "" {
			b.WriteString("[agent] " + x.Reply + "\n")
		}
	}
	resp, err := s.m.Generate(ctx, &model.Request{
		Model:    um.Model,
		System:   userSystem + um.Instructions,
		Messages: []model.Message{{Role: model.User, Text: "The conversation so far:\n" + cutText(b.String(), maxJudgeConversation) + "\nWrite your next message to the agent."}},
	})
	if err != nil {
		return "", false, &userError{fmt.Errorf("the simulated user (%s %s): %w", um.Provider, um.Model, err)}
	}
	s.usage.InputTokens += resp.Usage.InputTokens
	s.usage.OutputTokens += resp.Usage.OutputTokens
	msg := strings.TrimSpace(resp.Text)
	if um.StopWhen != nil && um.StopWhen.MatchString(msg) {
		*s.notes = append(*s.notes, fmt.Sprintf("the simulated user ended the conversation after %d message(s): %q matches stop_when /%s/", s.said, cutText(msg, 200), um.StopWhen))
		return "", false, nil
	}
	if msg == "" {
		*s.notes = append(*s.notes, "the simulated user ended the conversation: its model answered no text")
		return "", false, nil
	}
	s.said++
	return msg, true, nil
}

// finish ends the user's part of a case: the conversation goes into the
// report (with each reply's model turn from turns, the agent's), a
// model-driven user's request that strayed from its recording fails the
// case (r.replay), recorded calls of the user left unplayed by a run that
// finished fail it as the agent's do (r.unplayed), and the user's part of
// the cassette is saved for a run that finished (save).
func (s *simUser) finish(c *report.Case, turns []agent.Exchange, r *ran, save bool) {
	if s == nil {
		return
	}
	conv := turns
	if conv == nil {
		conv = s.conv
	}
	c.Conversation = make([]report.Message, 0, 2*len(conv))
	for i, x := range conv {
		c.Conversation = append(c.Conversation, report.Message{Role: "user", Turn: i + 1, Text: x.User})
		if x.ModelTurn > 0 || x.Reply != "" {
			c.Conversation = append(c.Conversation, report.Message{Role: "agent", Turn: i + 1, Text: x.Reply, ModelTurn: x.ModelTurn})
		}
	}
	if s.rec == nil {
		return
	}
	report.AddUsage(c, "user", report.Usage(s.usage))
	o := s.rec.End()
	c.Live += o.Sent
	if p := replayError(o.Replay); p != nil {
		r.replay = cmp.Or(r.replay, p) // the first straying found stays
		return
	}
	if save && r.replay == nil && r.live == nil && r.err == nil && r.unplayed == nil {
		r.unplayed = replayError(o.Unplayed)
	}
	if save && o.Live == nil && o.Unplayed == nil {
		if wrote, err := s.rec.Save(); err != nil {
			*s.notes = append(*s.notes, "the simulated user's part of the cassette could not be saved: "+err.Error())
		} else if wrote {
			*s.notes = append(*s.notes, fmt.Sprintf("recorded %s of the simulated user into %s", plural(o.Recorded, "model call", "model calls"), s.file))
		}
	}
}

// userError is a failure of a simulated user's model: the surroundings',
// not the agent's.
type userError struct{ err error }

func (e *userError) Error() string { return e.err.Error() }
func (e *userError) Unwrap() error { return e.err }

// replies are the agent's replies of a conversation, for checks.
func replies(c *report.Case) []string {
	if c.Conversation == nil {
		return nil
	}
	out := []string{}
	for _, m := range c.Conversation {
		if m.Role == "agent" {
			out = append(out, m.Text)
		}
	}
	return out
}

// hasModelUser says whether a case has a model-driven user, whose calls
// are kept in the user's part of its cassette.
func hasModelUser(c *spec.Case) bool { return c.User != nil && c.User.Model != nil }
