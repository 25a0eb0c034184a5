package model

import "strings"

// Side calls are the requests a coding-agent CLI makes besides its
// conversation: a token count, a small model's session title. dryfire
// answers them itself, before faults and the answerer, under every model:
// they take no script turn, no cassette entry, count no turn and no
// usage, and the outcome lists them (Called.Side). Token counts
// (Wire.Local) are always answered; the rest by a CLI's preset
// (RecorderOptions.SideCalls, agent.side_calls).

// SideCallsClaudeCode is the preset of Claude Code's side calls.
const SideCallsClaudeCode = "claude-code"

// claudeCodeTitle is how the system prompt of Claude Code's session
// title request (querySource generate_session_title, 2.1.328) begins:
// its answer is JSON with a "title".
const claudeCodeTitle = "You are naming a coding session"

// SideTitle is the title answered to a session title request.
const SideTitle = `{"title":"Scripted session"}`

// sideCall answers c when it is a side call: a token count, or one of
// preset's; nil when it is not.
func sideCall(preset string, c *Call) *Answer {
	if c.Wire.Local() {
		a := c.Wire.Script(c, nil, nil)
		a.Side = "token count, " + c.Wire.String()
		return a
	}
	if preset != SideCallsClaudeCode || c.Wire.String() != "anthropic" {
		return nil
	}
	req, err := c.Request()
	if err != nil || len(req.Tools) > 0 || !strings.Contains(req.System, claudeCodeTitle) {
		return nil
	}
	a := c.Wire.Script(c, req, &Response{Text: SideTitle})
	a.Usage = Usage{}
	a.Side = "Claude Code's session title"
	return a
}
