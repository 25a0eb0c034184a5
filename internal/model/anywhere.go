package model

import "strings"

// requestText is every text of a request a model is shown, one part a
// line: the system prompt, each message's text and calls' arguments, each
// tool's name and description (a guard's anywhere reads it).
func requestText(req *Request) string {
	if req == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(req.System)
	for _, m := range req.Messages {
		b.WriteByte('\n')
		b.WriteString(m.Text)
		for _, c := range m.ToolCalls {
			b.WriteByte('\n')
			b.WriteString(c.Args)
		}
	}
	for _, t := range req.Tools {
		b.WriteString("\n" + t.Name + "\n" + t.Description)
	}
	return b.String()
}
