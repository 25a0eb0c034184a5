package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/dryfire-dev/dryfire/report"
)

// A session's episode in OpenEnv's shapes (sessions.go): reset, step,
// state, and the verdict as the reward.

// reset starts a new episode of the session: a new drill from its
// build and seed (the request's case and seed over the session's), the
// old one abandoned (its evidence and record go with it).
func (s *Sessions) reset(ss *session, body []byte) ([]byte, *apiError) {
	st, aerr := parseSessionStart(body, "reset", resetKeys)
	if aerr != nil {
		return nil, aerr
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st.Case = cmp.Or(st.Case, ss.c.Name)
	old := ss.run
	old.Abandon()
	if aerr := s.begin(ss, st); aerr != nil {
		// The session has no drill now: it ends.
		s.mu.Lock()
		if s.byID[ss.id] == ss {
			s.forget(ss.id, ss, "its reset failed: "+aerr.message)
		}
		s.mu.Unlock()
		return nil, aerr
	}
	// The observation: the task and the tools, as a new episode.
	var t struct {
		Tools any `json:"tools"`
	}
	if w := s.call(http.MethodGet, "/sessions/"+ss.id+"/tools", nil); w.Code == http.StatusOK {
		json.Unmarshal(w.Body.Bytes(), &t)
	}
	obs := ss.about()
	obs["tools"] = t.Tools
	return marshal(map[string]any{"observation": obs, "reward": nil, "done": false}), nil
}

var stepKeys = []string{"action", "timeout_s", "request_id"}
var actionKeys = []string{"tool", "arguments", "answer", "metadata"}

// step takes one action: a tool call (its result the observation), or
// the answer that ends the episode (its verdict the observation, its
// score the reward).
func (s *Sessions) step(ss *session, body []byte) ([]byte, *apiError) {
	m, aerr := object(body, "step", stepKeys)
	if aerr != nil {
		return nil, aerr
	}
	if isNull(m["action"]) {
		return nil, invalid(`action is missing: {"action": {"tool": NAME, "arguments": {...}}} calls a tool, {"action": {"answer": TEXT}} ends the episode`)
	}
	return s.act(ss, m["action"])
}

// act takes one action (step's, or a WebSocket's step data).
func (s *Sessions) act(ss *session, raw json.RawMessage) ([]byte, *apiError) {
	a, aerr := object(raw, "an action", actionKeys)
	if aerr != nil {
		return nil, aerr
	}
	tool, aerr := str(a, "tool")
	if aerr != nil {
		return nil, aerr
	}
	_, answering := a["answer"]
	if (tool == "") == !answering {
		return nil, invalid(`an action is {"tool": NAME, "arguments": {...}} or {"answer": TEXT}, one of them`)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.final != nil {
		return nil, &apiError{http.StatusConflict, "EPISODE_DONE", "the episode is done (its answer was given): reset the session for another"}
	}
	if ss.steps >= MaxSteps {
		return nil, &apiError{http.StatusConflict, "TOO_MANY_STEPS", fmt.Sprintf("the episode has taken %d steps, its bound: answer to end it, or reset", MaxSteps)}
	}
	ss.steps++
	if answering {
		output := ""
		if raw := a["answer"]; !isNull(raw) && json.Unmarshal(raw, &output) != nil {
			output = string(raw)
		}
		c := ss.run.End(s.ctx, output, nil)
		obs, score := verdictOf(&c)
		ss.final, ss.score = obs, &score
		return marshal(map[string]any{"observation": json.RawMessage(obs), "reward": score, "done": true}), nil
	}
	args := a["arguments"]
	if isNull(args) {
		args = json.RawMessage("{}")
	}
	w := s.call(http.MethodPost, "/sessions/"+ss.id+"/tools/"+strings.NewReplacer("%", "%25", "/", "%2F", "?", "%3F", "#", "%23").Replace(tool), args)
	var res struct {
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	}
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &res) != nil {
		return nil, &apiError{w.Code, "TOOL_CALL", strings.TrimSpace(w.Body.String())}
	}
	obs := map[string]any{"tool": tool, "content": res.Content, "is_error": res.IsError}
	return marshal(map[string]any{"observation": obs, "reward": nil, "done": false}), nil
}

// verdictOf is the observation of an episode's end, and its reward:
// the mean of its checks' scores (a judge's score where it gave one,
// else 1 passed and 0 failed), 1 or 0 for a drill without checks.
func verdictOf(c *report.Case) ([]byte, float64) {
	verdict, seed := verdictSeed(c)
	type sub struct {
		Check   string  `json:"check"`
		At      string  `json:"at"`
		Passed  bool    `json:"passed"`
		Score   float64 `json:"score"`
		Message string  `json:"message"`
	}
	subs := make([]sub, 0, len(c.Checks))
	total := 0.0
	for _, ch := range c.Checks {
		sc := 0.0
		switch {
		case ch.Judge != nil && ch.Judge.Score != nil:
			sc = *ch.Judge.Score
		case ch.Passed:
			sc = 1
		}
		total += sc
		subs = append(subs, sub{ch.Check, ch.At, ch.Passed, sc, ch.Message})
	}
	score := 0.0
	switch {
	case c.Status != report.Passed && c.Status != report.Failed:
		score = 0 // erred or skipped: no verdict to score
	case len(subs) > 0:
		score = total / float64(len(subs))
	case c.Status == report.Passed:
		score = 1
	}
	return marshal(map[string]any{
		"verdict":    verdict,
		"status":     c.Status,
		"score":      score,
		"checks":     subs,
		"failures":   failures(c, nil),
		"seed":       seed,
		"build_hash": c.BuildHash,
		"evidence":   len(c.Evidence),
	}), score
}

// state is the session's state: the episode, its steps, the world's
// clock and state, and the verdict once it is done (OpenEnv's State:
// episode_id and step_count, and more).
func (s *Sessions) state(ss *session) []byte {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ans := map[string]any{
		"episode_id": ss.ep,
		"step_count": ss.steps,
		"session_id": ss.id,
		"drill":      ss.c.Name,
		"seed":       ss.in.Seed(),
		"done":       ss.final != nil,
	}
	if ss.final != nil {
		ans["verdict"] = json.RawMessage(ss.final)
		return marshal(ans)
	}
	if w := s.call(http.MethodGet, "/sessions/"+ss.id+"/world/state", nil); w.Code == http.StatusOK {
		ans["state"] = json.RawMessage(w.Body.Bytes())
	}
	if w := s.call(http.MethodGet, "/sessions/"+ss.id+"/world/clock", nil); w.Code == http.StatusOK {
		var c struct {
			Now string `json:"now"`
		}
		json.Unmarshal(w.Body.Bytes(), &c)
		ans["now"] = c.Now
	}
	return marshal(ans)
}
