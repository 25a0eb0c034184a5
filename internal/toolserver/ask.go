package toolserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// A rule's elicit or sample (internal/mock's ask.go) reaches the MCP
// client of the call here, in the way the call's era has:
//
//   - Up to 2025-11-25, in a session: go-sdk's ServerSession sends the
//     request (Elicit, CreateMessage) and waits for the client's answer.
//     Over streamable HTTP it goes in the call's own event stream: a scope
//     whose rules ask has go-sdk answer POSTs as event streams (see
//     newMCPServer), and the fast path leaves calls of such tools to it.
//     Over stdio it goes on the one stream.
//   - 2026-07-28 (multi round-trip requests, SEP-2322): the server sends
//     no requests. The call's first request is answered input_required,
//     its inputRequests holding the request, while the call's answer
//     waits on (pendingCall); the client retries the call with its answer
//     in inputResponses and the requestState it was given, and that
//     retry is answered with the call's result. The call is recorded
//     once, as one call.
//
// Either way the client's capabilities are checked first, and a call
// that cannot ask (no capability, no session) gets an error result
// saying why; the rule's timeout_s bounds the wait (mock).

// asks are a scope's calls that may ask their client: the tools with a
// rule that asks (elicit, sample), and the 2026-07-28 calls waiting for
// the client's retry with its answer, by requestState. Nil when no rule
// of the scope asks.
type asks struct {
	tools   map[string]bool
	mu      sync.Mutex
	pending map[string]*pendingCall
	waiting atomic.Int64 // 2026-07-28 calls of asking tools running (maxWaiting)
}

// newAsks are the asks of the tools named; nil for none.
func newAsks(tools []string) *asks {
	if len(tools) == 0 {
		return nil
	}
	a := &asks{tools: map[string]bool{}}
	for _, name := range tools {
		a.tools[name] = true
	}
	return a
}

// may says whether a call of tool name may ask the client something.
func (a *asks) may(name string) bool { return a != nil && a.tools[name] }

// callAsker is the tool.Asker of one tools/call over MCP.
type callAsker struct {
	req *mcp.CallToolRequest
	// stateless: a legacy request without a session, which go-sdk
	// cannot send requests in.
	stateless bool
	// pending: a 2026-07-28 call, whose asks go out in an
	// input_required answer; nil before 2026-07-28.
	pending *pendingCall
}

var _ tool.Asker = (*callAsker)(nil)

func (a *callAsker) Ask(ctx context.Context, ask *tool.Ask) ([]byte, error) {
	if a.pending == nil && (a.stateless || a.req.Session == nil) {
		return nil, errors.New("this call came without an MCP session (no Mcp-Session-Id), and a server sends requests only in one: open a session with initialize")
	}
	caps := a.req.ClientCapabilities()
	switch ask.Method {
	case "elicitation/create":
		if caps == nil || caps.Elicitation == nil {
			return nil, errors.New("the client does not declare the elicitation capability")
		}
		if caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
			return nil, errors.New("the client declares URL elicitation only, and this one is a form")
		}
	case "sampling/createMessage":
		if caps == nil || caps.Sampling == nil {
			return nil, errors.New("the client does not declare the sampling capability")
		}
	}
	if a.pending != nil {
		return a.pending.Ask(ctx, ask)
	}
	ss := a.req.Session
	var res any
	var err error
	switch ask.Method {
	case "elicitation/create":
		var p mcp.ElicitParams
		if err := json.Unmarshal(ask.Params, &p); err != nil {
			return nil, fmt.Errorf("internal error: %w", err)
		}
		res, err = ss.Elicit(ctx, &p)
	default:
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(ask.Params, &p); err != nil {
			return nil, fmt.Errorf("internal error: %w", err)
		}
		res, err = ss.CreateMessage(ctx, &p)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// pendingCall is a 2026-07-28 tools/call of a tool whose rules may ask:
// its answer runs on its own, and what it asks goes to the client in an
// input_required result, whose retry brings the answer.
type pendingCall struct {
	name       string
	structured bool // the tool's result carries structuredContent

	asked   chan *tool.Ask    // the call's answer asks the client this
	answers chan askAnswer    // the client's answer, from a retry
	done    chan *tool.Result // the call's answer
	// ctx is the answer's, done when it ends; cancel ends it early.
	ctx    context.Context
	cancel context.CancelCauseFunc
	key    string // the inputRequests key of the ask out (set by await)
}

type askAnswer struct {
	data []byte
	err  error
}

// Ask sends ask to the call's request waiting in await, which answers it
// input_required, and waits for the retry's answer.
func (p *pendingCall) Ask(ctx context.Context, ask *tool.Ask) ([]byte, error) {
	select {
	case p.asked <- ask:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	select {
	case a := <-p.answers:
		return a.data, a.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// inputRequired is the CallToolResult that says the client must answer
// inputRequests and retry: resultType is unexported in go-sdk, which sets
// it when it decodes a result (as completeResult does).
var inputRequired = sync.OnceValue(func() mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"input_required"}`), &r); err != nil {
		panic(err)
	}
	r.Content = nil
	return r
})

// maxWaiting bounds the 2026-07-28 calls of tools that may ask whose
// answers run at once in a scope: each may wait up to its rule's
// timeout_s for the client's retry.
var maxWaiting = 1000

// call answers a 2026-07-28 tools/call of a tool whose rules may ask: a
// first request starts the call (answer, with the asker in its context),
// a retry (requestState) brings the client's answer to what it asked.
func (a *asks) call(ctx context.Context, req *mcp.CallToolRequest, name string, structured bool, answer func(context.Context) tool.Result) (*mcp.CallToolResult, error) {
	if state := req.Params.RequestState; state != "" {
		p, other := a.take(state, name)
		if other != "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("requestState %q belongs to a call of %q, not of %q", state, other, name)}
		}
		if p == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("requestState %q names no call waiting for the client's answer: it was answered already, or its wait ended (the rule's timeout_s)", state)}
		}
		var ans askAnswer
		if r, ok := req.Params.InputResponses[p.key]; ok && r != nil {
			ans.data, ans.err = json.Marshal(r)
		} else {
			ans.err = fmt.Errorf("the client retried the call without an answer to %q in inputResponses", p.key)
		}
		p.answers <- ans
		return a.await(ctx, req, p)
	}
	if a.waiting.Add(1) > int64(maxWaiting) {
		a.waiting.Add(-1)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("too many calls of this case wait for their client's answer (the bound is %d at once): retry later", maxWaiting)}
	}
	actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	p := &pendingCall{name: name, structured: structured, asked: make(chan *tool.Ask), answers: make(chan askAnswer, 1), done: make(chan *tool.Result, 1), ctx: actx, cancel: cancel}
	asker := &callAsker{req: req, pending: p}
	go func() {
		defer a.waiting.Add(-1)
		defer cancel(nil)
		res := answer(tool.WithAsker(actx, asker))
		p.done <- &res
	}()
	return a.await(ctx, req, p)
}

// await waits for the call's answer, which answers req (a rule's log
// and progress sent first), or for what it asks, which it answers
// input_required.
func (a *asks) await(ctx context.Context, req *mcp.CallToolRequest, p *pendingCall) (*mcp.CallToolResult, error) {
	select {
	case res := <-p.done:
		if res.Notices != nil && req.Session != nil {
			sendNotices(ctx, req, res.Notices)
		}
		return toolResult(*res, true, p.structured), nil
	case ask := <-p.asked:
		var params mcp.InputRequest
		key := "elicit"
		if ask.Method == "elicitation/create" {
			var ep mcp.ElicitParams
			json.Unmarshal(ask.Params, &ep)
			params = &ep
		} else {
			var cp mcp.CreateMessageParams
			json.Unmarshal(ask.Params, &cp)
			params, key = &cp, "sample"
		}
		token := rand.Text()
		p.key = key // before the client can retry
		a.put(token, p)
		out := inputRequired()
		out.InputRequests = mcp.InputRequestMap{key: params}
		out.RequestState = token
		return &out, nil
	case <-ctx.Done():
		// The client stopped waiting; the call's answer goes on (and is
		// recorded) without it.
		return nil, context.Cause(ctx)
	}
}

// put keeps p under its requestState token until a retry takes it or
// the call's answer ends.
func (a *asks) put(token string, p *pendingCall) {
	a.mu.Lock()
	if a.pending == nil {
		a.pending = map[string]*pendingCall{}
	}
	a.pending[token] = p
	a.mu.Unlock()
	go func() {
		<-p.ctx.Done()
		a.mu.Lock()
		if a.pending[token] == p {
			delete(a.pending, token)
		}
		a.mu.Unlock()
	}()
}

// take removes and returns the call of tool name waiting under
// token, or nil; a call of another tool stays, and other is its name. (A
// retry naming another tool took the call out and put it back, a new
// waiter each time.)
func (a *asks) take(token, name string) (p *pendingCall, other string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p = a.pending[token]
	if p != nil && p.name != name {
		return nil, p.name
	}
	delete(a.pending, token)
	return p, ""
}

// end ends the wait of every call waiting for a retry: the scope is
// reset or shut down.
func (a *asks) end(why error) {
	if a == nil {
		return
	}
	a.mu.Lock()
	all := a.pending
	a.pending = nil
	a.mu.Unlock()
	for _, p := range all {
		p.cancel(why)
	}
}
