package model

import "context"

// anthropic speaks the Anthropic Messages API.
type anthropic struct{ c *caller }

func newAnthropic(c *caller) *anthropic { return &anthropic{c: c} }

// Generate implements Model. (To be written: see the provider issue.)
func (a *anthropic) Generate(ctx context.Context, req *Request) (*Response, error) {
	panic("not yet")
}
