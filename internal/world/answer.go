package world

import (
	"context"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

var _ tool.Answerer = (*Instance)(nil)

// Answer answers a tool call as an operation by the drill's actor, named
// by its tool; args is c.Args parsed (nil when perr says it is not JSON,
// and the operation then decodes the text itself, to say why).
func (in *Instance) Answer(_ context.Context, c tool.Call, args any, perr error) tool.Result {
	req := Request{Tool: c.Name, Arguments: c.Args}
	if perr == nil {
		req.Args = args
	}
	return in.Call(req).Result()
}

// Result is the response as a tool result: what the agent receives, and
// the call's evidence.
func (r *Response) Result() tool.Result {
	return tool.Result{Content: r.Content(), IsError: r.Status != "ok", Outcome: tool.Outcome(r.Evidence.Outcome), Entry: -1, Evidence: r.Evidence}
}

// Op is one operation request answered through a tool.Recorder (the
// /ops route, which names the operation, actor and idempotency key
// itself); Response is its answer once the call is done.
type Op struct {
	In       *Instance
	Req      Request
	Response *Response
}

// Answer runs the request, with the arguments parsed once by the
// recorder.
func (o *Op) Answer(_ context.Context, _ tool.Call, args any, perr error) tool.Result {
	req := o.Req
	if perr == nil {
		req.Args = args
	}
	o.Response = o.In.Call(req)
	return o.Response.Result()
}
