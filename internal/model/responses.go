package model

import "context"

// openAIResponses speaks the OpenAI Responses API.
type openAIResponses struct{ c *caller }

func newOpenAIResponses(c *caller) *openAIResponses { return &openAIResponses{c: c} }

// Generate implements Model. (To be written.)
func (o *openAIResponses) Generate(ctx context.Context, req *Request) (*Response, error) {
	panic("not yet")
}
