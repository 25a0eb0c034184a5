package world

import (
	"context"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Forced answers tool calls as Instance.Answer does, each with Rule in
// place of the overrides (Request.Force): how a fault sweep fails a call
// through the world's own pipeline, so that its evidence has the call.
type Forced struct {
	In   *Instance
	Rule *Override
}

// Answer runs the call with the forced rule.
func (f Forced) Answer(_ context.Context, c tool.Call, args any, perr error) tool.Result {
	req := Request{Tool: c.Name, Arguments: c.Args, Force: f.Rule}
	if perr == nil {
		req.Args = args
	}
	return f.In.Call(req).Result()
}
