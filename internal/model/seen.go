package model

import "github.com/dryfire-dev/dryfire/internal/tool"

// Seen is what one answered model call shows of the agent's tool calls,
// wherever they run (dryfire's tools or the agent's own functions): the
// calls its answer asks for, in the answer's order, and the tool results
// its request carries (Role tool messages: CallID, Text, IsError). Turn
// is the model turn it was (from 1). Every answered call passes through
// Recorder.done, which keeps one (Outcome.Seen); the runner joins them
// with the calls dryfire served (internal/runner/transcript.go).
type Seen struct {
	Turn    int
	Calls   []tool.Call
	Results []Message
}

// SeenOf is what a request and its answer, read into the neutral forms
// whatever their API (Wire.Request, Wire.Response), show of tool calls:
// the one place they are read for it. Either may be nil.
func SeenOf(req *Request, resp *Response) (calls []tool.Call, results []Message) {
	if req != nil {
		for _, m := range req.Messages {
			if m.Role == ToolRole {
				results = append(results, Message{Role: ToolRole, CallID: m.CallID, Text: m.Text, IsError: m.IsError})
			}
		}
	}
	if resp != nil {
		calls = resp.ToolCalls
	}
	return calls, results
}
