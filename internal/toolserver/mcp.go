package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The MCP side of a scope, through the official go-sdk (v1.8.0).
//
// go-sdk serves the two protocol eras with two kinds of streamable HTTP
// handler: a stateful one (Stateless: false) runs the legacy initialize
// handshake and keeps sessions by Mcp-Session-Id, and rejects 2026-07-28
// requests; a stateless one (Stateless: true) serves 2026-07-28
// (server/discover, _meta on every request) and legacy requests without a
// session, making a short-lived session per request. /mcp puts one of each
// behind a router (mcpHandler) that looks at headers only, except for a
// sessionless POST whose body it peeks at to tell initialize from the rest.
//
// tools/list and tools/call go through one receiving middleware that
// answers them from the scope: the tools in file order (go-sdk sorts them
// by name), and a tool the suite does not know answered the way the
// built-in loop answers it (an error result naming the tool, with a
// did-you-mean), not with go-sdk's JSON-RPC "unknown tool" error. Over
// HTTP, the common tools/call does not reach go-sdk at all (fast.go).

// mcpServer is a scope's go-sdk server and its two HTTP handlers.
type mcpServer struct {
	s         *Scope
	server    *mcp.Server
	stateful  *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler
}

// maxBody bounds the body of one MCP or tool request.
const maxBody = 4 << 20

func newMCPServer(s *Scope) *mcpServer {
	impl := &mcp.Implementation{Name: "dryfire", Title: "dryfire: " + s.suite.Name, Version: ServerVersion}
	s.serverInfo, _ = json.Marshal(impl)
	// Tools never change while serving; logging is there because
	// clients may set a level (nothing is ever logged to them).
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}}
	complete := s.extras.options(caps)
	server := mcp.NewServer(impl, &mcp.ServerOptions{Capabilities: caps, CompletionHandler: complete})
	s.extras.add(server)
	// The tools are registered (go-sdk consults them for the Mcp-Name
	// header checks), but both tools methods are answered by the
	// middleware below: go-sdk lists tools sorted by name, dryfire in file
	// order, and answers unknown tools with a JSON-RPC error.
	m := &mcpServer{s: s, server: server}
	unreachable := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return m.call(ctx, req)
	}
	tools := make([]*mcp.Tool, len(s.tools))
	for i, t := range s.tools {
		if bytes.Contains(t.InputSchema, []byte(`"x-mcp-header"`)) {
			s.noFastModern = true
		}
		tools[i] = &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		if t.OutputSchema != nil {
			tools[i].OutputSchema = t.OutputSchema
		}
		server.AddTool(tools[i], unreachable)
	}
	server.AddReceivingMiddleware(m.answering(tools))
	// The outermost middleware: results as the request's protocol
	// version defines them.
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err == nil && !modernRequest(req) {
				res = legacyResult(res)
			}
			return res, err
		}
	})
	opts := mcp.StreamableHTTPOptions{
		// One JSON body per answer rather than an SSE stream: every client
		// accepts both, and a mock has nothing to stream. Except in a
		// scope whose rules ask the client something (ask.go): go-sdk
		// sends a request in the call's own stream only in an event
		// stream (in JSON mode it goes to the session's standalone stream,
		// which a client need not open).
		JSONResponse: s.asks == nil,
		// The Server checks Host and Origin on every route, /mcp included.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBody,
	}
	get := func(*http.Request) *mcp.Server { return server }
	m.stateful = mcp.NewStreamableHTTPHandler(get, &opts)
	opts.Stateless, opts.JSONResponse = true, true
	m.stateless = mcp.NewStreamableHTTPHandler(get, &opts)
	return m
}

// answering is the middleware that answers tools/list and tools/call
// from the scope, registers sessions and log levels, and records the
// requests of the suite's resources and prompts.
func (m *mcpServer) answering(tools []*mcp.Tool) mcp.Middleware {
	s := m.s
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				if r, ok := req.(*mcp.CallToolRequest); ok {
					res, err := m.call(ctx, r)
					if err != nil {
						return nil, err
					}
					return res, nil
				}
			case "initialize":
				res, err := next(ctx, method, req)
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && err == nil {
					s.sessions.register(ss)
				}
				return res, err
			case "logging/setLevel":
				res, err := next(ctx, method, req)
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && err == nil {
					s.sessions.setLogLevel(req.GetSession(), string(p.Level))
				}
				return res, err
			case "resources/read", "prompts/get", "completion/complete":
				res, err := next(ctx, method, req)
				s.extras.record(method, req, err)
				return res, err
			case "tools/list":
				// One page, in file order. A new result each time: go-sdk
				// writes serverInfo into the _meta of 2026-07-28 results.
				return &mcp.ListToolsResult{Cacheable: mcp.Cacheable{CacheScope: "public"}, Tools: tools}, nil
			}
			return next(ctx, method, req)
		}
	}
}

// ServerVersion is the version serverInfo gives, fixed: clients hand
// serverInfo to the model (Mastra puts a result's _meta into its text),
// so dryfire's own version would change what a cassette recorded through
// them holds at every upgrade.
const ServerVersion = "1.0.0"

// statelessKey marks the context of a request served by the stateless
// handler: its calls use the scope's shared state.
type statelessKey struct{}

// call answers tools/call: the text the built-in loop would deliver,
// structuredContent when the tool declares an output schema (a world
// operation's; see toolResult), isError for errors
// and unmatched calls; a content outcome's blocks as they are. A rule's
// log and progress notifications are sent first. A call of a tool whose
// rules ask the client something (elicit, sample) can ask it (ask.go);
// its error is a JSON-RPC error (a 2026-07-28 retry that is not one).
func (m *mcpServer) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s := m.s
	var ss *mcp.ServerSession
	if ctx.Value(statelessKey{}) == nil {
		ss = req.Session
	}
	var name string
	var args json.RawMessage
	modern := false
	if p := req.Params; p != nil {
		name, args = p.Name, p.Arguments
		v, _ := p.Meta[metaProtocolVersion].(string)
		modern = v >= "2026-07-28"
	}
	if s.asks.may(name) {
		if modern {
			return s.asks.call(ctx, req, name, s.structured[name], func(ctx context.Context) tool.Result { return s.answer(ctx, ss, name, args) })
		}
		ctx = tool.WithAsker(ctx, &callAsker{req: req, stateless: ctx.Value(statelessKey{}) != nil})
	}
	res := s.answer(ctx, ss, name, args)
	if res.Notices != nil && req.Session != nil {
		sendNotices(ctx, req, res.Notices)
	}
	return toolResult(res, modern, s.structured[name]), nil
}

// sendNotices sends a call's log messages and progress through go-sdk,
// before its answer: go-sdk sends log messages at or above the level the
// client set (none before it sets one), and progress only when the
// request carries a progressToken. Over stdio they come before the
// answer on the one stream; over HTTP, where go-sdk answers in JSON, they
// go to the session's standalone stream (the fast path, which answers
// the usual tools/call over HTTP, sends them in the call's own stream).
func sendNotices(ctx context.Context, req *mcp.CallToolRequest, n *tool.Notices) {
	for _, l := range n.Log {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(l.Level), Logger: l.Logger, Data: json.RawMessage(l.Data)})
	}
	if tok := req.Params.GetProgressToken(); tok != nil && len(n.Progress) > 0 {
		total := n.Progress[len(n.Progress)-1]
		for _, p := range n.Progress {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: total})
		}
		// The MCP TypeScript SDK (1.x) loses progress notifications that
		// reach it in the same read as the answer: it dispatches
		// notifications in microtasks but removes the call's progress
		// handler as soon as it reads the answer. A pause before the
		// answer puts it in a read of its own.
		time.Sleep(progressPause)
	}
}

// progressPause is the pause between a call's progress notifications and
// its answer over stdio.
const progressPause = 20 * time.Millisecond

const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// completeResult is a CallToolResult whose resultType is "complete", as
// 2026-07-28 results carry it. The field is unexported: go-sdk sets it in
// its own tools/call path, which the middleware bypasses, and when it
// decodes a result, which is how this one is made (on first use: decoding
// at init costs every command 376 allocations); copies keep it.
var completeResult = sync.OnceValue(func() mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &r); err != nil {
		panic(err)
	}
	return r
})

// toolResult is a call's MCP result. structuredContent is there only for
// a tool with an output schema (structured), as MCP means it: the
// structured form of a result whose shape the tool declared. Without
// one, clients show the model the text block, and some would show it
// both (@langchain/mcp-adapters puts structuredContent beside the text,
// a JSON object the model then reads twice, the second time encoded).
func toolResult(res tool.Result, modern, structured bool) *mcp.CallToolResult {
	out := new(mcp.CallToolResult)
	if modern {
		*out = completeResult()
	}
	out.Content = []mcp.Content{&mcp.TextContent{Text: res.Content}}
	if res.Blocks != nil {
		out.Content = blockContent(res.Blocks)
	}
	out.IsError = res.IsError
	if structured && !res.IsError && res.Blocks == nil && isObject(res.Content) {
		out.StructuredContent = json.RawMessage(res.Content)
	}
	return out
}

// blockContent is a content outcome's blocks as go-sdk content, for the
// paths go-sdk writes (stdio, and requests the fast path leaves to it).
func blockContent(blocks []byte) []mcp.Content {
	var r mcp.CallToolResult
	if err := json.Unmarshal(append(append([]byte(`{"content":`), blocks...), '}'), &r); err != nil {
		// The loader has checked every block; this is a bug.
		return []mcp.Content{&mcp.TextContent{Text: "dryfire: internal error: content blocks: " + err.Error()}}
	}
	return r.Content
}

// isObject reports whether s is the JSON text of an object.
func isObject(s string) bool {
	return len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' && json.Valid([]byte(s))
}

// ServeMCP serves the scope over one MCP connection, such as one end of
// mcp.NewInMemoryTransports (for standard input and output, ServeStdio),
// until the client disconnects or ctx is done. The connection is one
// session: it has its own sequence state.
func (s *Scope) ServeMCP(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.server.Run(ctx, t)
	if errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// closeSessions ends every MCP session of the scope (their standalone
// SSE streams included), for a shutdown.
func (m *mcpServer) closeSessions() {
	m.s.asks.end(errors.New("the server is shutting down"))
	var wg sync.WaitGroup
	for _, ss := range slices.Collect(m.server.Sessions()) {
		wg.Go(func() { ss.Close() })
	}
	wg.Wait()
}

// mcpHandler is /mcp: it sends each request to go-sdk's stateful or
// stateless handler.
//
//   - MCP-Protocol-Version 2026-07-28 or later: stateless (the new era has
//     no sessions; go-sdk's stateless handler also answers its errors:
//     -32020 header mismatch, -32022 unsupported version, 405 for GET).
//   - Mcp-Session-Id: stateful (the session's own requests, its GET
//     stream, its DELETE).
//   - any other POST: initialize opens a session (stateful); anything else
//     is a request without a session (stateless), answered on the scope's
//     shared state.
//   - any other GET or DELETE: stateful, which says a session is needed.
//
// A POST that go-sdk refuses in plain text is answered with a JSON-RPC
// error instead (rpcErrorWriter).
type mcpHandler struct{ s *Scope }

func (h mcpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := h.s.mcp
	var hs *httpSession
	if sid := r.Header["Mcp-Session-Id"]; len(sid) > 0 && sid[0] != "" {
		// The session's client is active: its idle time starts over, now
		// and when this request ends (a GET stream may stay open long).
		if hs = h.s.sessions.get(sid[0]); hs != nil {
			hs.touch()
			defer hs.touch()
		}
	}
	if r.Method == http.MethodPost && !h.s.slowMCP && h.fastCall(w, r, hs) {
		return
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	modern := version >= "2026-07-28"
	if r.Method != http.MethodPost {
		if modern {
			m.serveStateless(w, r)
		} else {
			m.stateful.ServeHTTP(w, r)
		}
		return
	}
	// A POST carries JSON-RPC: go-sdk's plain-text refusals of it become
	// JSON-RPC errors, which need the body's id.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, -32600, fmt.Sprintf("reading the request: %v (the bound is %d bytes)", err, maxBody))
		return
	}
	if bad, id, code, msg := checkRPC(body); bad {
		writeRPCError(w, http.StatusBadRequest, id, code, msg)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rw := &rpcErrorWriter{ResponseWriter: w}
	defer rw.finish(body, modern)
	switch {
	case modern:
		m.serveStateless(rw, r)
	case r.Header.Get("Mcp-Session-Id") != "" || opensSession(body):
		m.stateful.ServeHTTP(rw, r)
	default:
		m.serveStateless(rw, r)
	}
}

func (m *mcpServer) serveStateless(w http.ResponseWriter, r *http.Request) {
	m.stateless.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), statelessKey{}, true)))
}

// opensSession reports whether body is an initialize request (or a batch
// holding one). Bodies go-sdk cannot read go to the stateful handler,
// which says what is wrong with them.
func opensSession(body []byte) bool {
	type msg struct {
		Method string `json:"method"`
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []msg
		if json.Unmarshal(body, &batch) != nil {
			return true
		}
		return slices.ContainsFunc(batch, func(m msg) bool { return m.Method == "initialize" })
	}
	var one msg
	if json.Unmarshal(body, &one) != nil {
		return true
	}
	return one.Method == "initialize"
}
