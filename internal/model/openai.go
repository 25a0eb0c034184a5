package model

import "context"

// openAIChat speaks OpenAI Chat Completions (also any OpenAI-compatible server).
type openAIChat struct{ c *caller }

func newOpenAIChat(c *caller) *openAIChat { return &openAIChat{c: c} }

// Generate implements Model. (To be written.)
func (o *openAIChat) Generate(ctx context.Context, req *Request) (*Response, error) {
	panic("not yet")
}
