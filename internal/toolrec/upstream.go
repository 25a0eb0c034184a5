// Package toolrec records real tools so that a suite can answer from
// then on without them: a proxy in front of an MCP server (started as a
// command over stdio, or reached by URL over streamable HTTP or the
// older HTTP+SSE transport) or plain HTTP tools, which forwards every
// call of a run's cases and keeps what the upstream answered; and the
// writer that turns those answers into first-match mock rules merged
// into the suite file, beside the hand-written ones, which it never
// changes.
package toolrec

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Target is the upstream to record: exactly one of Command, URL and
// HTTP.
type Target struct {
	// Command is an MCP server run as a program, spoken to over its
	// standard input and output.
	Command []string
	Dir     string   // the command's working directory; "" the current one
	Env     []string // the command's environment; nil the process's
	// URL is an MCP server over HTTP: streamable HTTP, or the HTTP+SSE
	// transport of the 2024-11-05 era when SSE is set.
	URL string
	SSE bool
	// HTTP is the base URL of plain HTTP tools: GET BASE/tools lists
	// them, POST BASE/tools/NAME with the arguments as a JSON object
	// calls one (the shape dryfire serve answers).
	HTTP string
	// CallTimeout bounds one forwarded call; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
}

// DefaultCallTimeout bounds a forwarded call unless Target says
// otherwise: a real tool that never answers must not hang the run.
const DefaultCallTimeout = 60 * time.Second

// MaxAnswer bounds the bytes of one answer read from an upstream: a
// plain HTTP tool's body, an MCP server's JSON body or one event of its
// stream (ErrAnswerTooLarge).
const MaxAnswer = 8 << 20

// MaxTools bounds the tools an upstream may list.
const MaxTools = 10_000

// MaxExchanges bounds the calls an Upstream keeps: later ones are
// forwarded and answered, not kept (Dropped counts them).
const MaxExchanges = 100_000

// outsideError is an error whose text is a real tool's (a JSON-RPC
// error message, a refusal): written Printable, on one line, so that
// wherever it is printed or kept it starts no line and moves no cursor.
type outsideError struct{ err error }

func outside(err error) error { return outsideError{err} }

func (e outsideError) Error() string { return termtext.Printable(e.err.Error()) }
func (e outsideError) Unwrap() error { return e.err }

// Label names the target in messages and in the comments of recorded
// rules: the command line, or the URL without credentials.
func (t Target) Label() string {
	switch {
	case len(t.Command) > 0:
		return strings.Join(t.Command, " ")
	case t.URL != "":
		return stripCredentials(t.URL)
	}
	return stripCredentials(t.HTTP)
}

func stripCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// Answer is what the upstream answered one call: the MCP content blocks
// (JSON objects), or the text of a plain HTTP tool as one text block.
type Answer struct {
	IsError bool
	Blocks  []any
}

// Exchange is one forwarded call: which case made it, the tool, the
// arguments (parsed JSON) and the answer. Err is set instead of an
// answer when the upstream could not be reached or refused the request.
type Exchange struct {
	Suite, Case string
	Tool        string
	Args        any
	Answer      Answer
	Err         string

	done bool // answered (an Upstream's record holds calls still running)
}

// Upstream is a connected target. It is safe for concurrent use.
type Upstream struct {
	t       Target
	session *mcp.ClientSession // MCP targets
	client  *http.Client       // plain HTTP targets
	tools   []plan.Tool
	// stop ends every HTTP exchange with an MCP server by URL (its
	// streams included): how Close gets out of one that never ends.
	stop context.CancelFunc

	mu      sync.Mutex
	log     []Exchange
	dropped int
}

// Dial connects to the target and reads its tool list.
func Dial(ctx context.Context, t Target) (*Upstream, error) {
	n := 0
	for _, set := range []bool{len(t.Command) > 0, t.URL != "", t.HTTP != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("name exactly one upstream: an MCP server command, an MCP URL, or a base URL of HTTP tools")
	}
	if t.CallTimeout == 0 {
		t.CallTimeout = DefaultCallTimeout
	}
	u := &Upstream{t: t}
	if t.HTTP != "" {
		u.client = &http.Client{Timeout: t.CallTimeout, CheckRedirect: sameOrigin}
		if err := u.listHTTP(ctx); err != nil {
			return nil, fmt.Errorf("listing the tools of %s: %w", t.Label(), outside(err))
		}
		return u, nil
	}
	var tr mcp.Transport
	var errTail *stderrTail
	hctx, stop := context.WithCancel(context.Background())
	u.stop = stop
	hc := &http.Client{Transport: &stoppable{ctx: hctx, rt: http.DefaultTransport}, CheckRedirect: sameOrigin}
	switch {
	case len(t.Command) > 0:
		cmd := exec.Command(t.Command[0], t.Command[1:]...)
		cmd.Dir, cmd.Env = t.Dir, t.Env
		if errTail = newStderrTail(); errTail != nil {
			cmd.Stderr = errTail.w
		}
		tr = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case t.SSE:
		tr = &mcp.SSEClientTransport{Endpoint: t.URL, HTTPClient: hc}
	default:
		tr = &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "dryfire-record-tools", Version: "1"}, nil)
	// The context of Connect is the session's (the HTTP+SSE stream lives
	// in it): the time it may take is bounded by a timer instead.
	slow := time.AfterFunc(t.CallTimeout, stop)
	s, err := c.Connect(hctx, tr, nil)
	slow.Stop()
	if errTail != nil {
		errTail.started()
	}
	if err != nil {
		timedOut := hctx.Err() != nil
		stop()
		if timedOut {
			err = fmt.Errorf("no answer within %s", t.CallTimeout)
		}
		if errTail != nil {
			if end := errTail.end(); end != "" {
				err = fmt.Errorf("%w; its standard error ends: %s", err, end)
			}
		}
		return nil, fmt.Errorf("connecting to the MCP server %s: %w", t.Label(), outside(err))
	}
	cctx, cancel := context.WithTimeout(ctx, t.CallTimeout)
	defer cancel()
	u.session = s
	for tl, err := range s.Tools(cctx, nil) {
		if err != nil {
			u.Close()
			return nil, fmt.Errorf("listing the tools of %s: %w", t.Label(), outside(err))
		}
		if len(u.tools) == MaxTools {
			u.Close()
			return nil, fmt.Errorf("listing the tools of %s: more than %d tools (MaxTools)", t.Label(), MaxTools)
		}
		var schema any
		if tl.InputSchema != nil {
			b, err := json.Marshal(tl.InputSchema)
			if err == nil {
				schema, _ = value.Parse(b)
			}
		}
		u.tools = append(u.tools, plan.Tool{Name: tl.Name, Description: tl.Description, Input: schema})
	}
	return u, nil
}

// listHTTP reads GET BASE/tools: {"tools": [{name, description, input_schema}]}.
func (u *Upstream) listHTTP(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.httpURL("/tools"), nil)
	if err != nil {
		return err
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /tools answered %s", resp.Status)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Input       json.RawMessage `json:"input_schema"`
			InputCamel  json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("GET /tools: not a tool list ({\"tools\": [...]}): %w", err)
	}
	if len(list.Tools) > MaxTools {
		return fmt.Errorf("more than %d tools (MaxTools)", MaxTools)
	}
	for _, tl := range list.Tools {
		raw := tl.Input
		if raw == nil {
			raw = tl.InputCamel
		}
		schema, _ := value.Parse(raw) // nil: none
		u.tools = append(u.tools, plan.Tool{Name: tl.Name, Description: tl.Description, Input: schema})
	}
	return nil
}

// httpURL is the base URL of plain HTTP tools with the path suffix
// (escaped) after its path: its query (a ?api_key=) stays a query.
func (u *Upstream) httpURL(suffix string) string {
	b, err := url.Parse(u.t.HTTP)
	if err != nil {
		return strings.TrimSuffix(u.t.HTTP, "/") + suffix
	}
	raw := strings.TrimSuffix(b.EscapedPath(), "/") + suffix
	if p, err := url.PathUnescape(raw); err == nil {
		b.Path, b.RawPath = p, raw
	}
	return b.String()
}

// MaxRedirects bounds the redirects followed within the upstream's origin.
const MaxRedirects = 10

// sameOrigin is the redirect policy of every request to an upstream: a
// redirect is followed within the origin it was asked of (scheme, host
// and port), without a Referer (the URL may carry ?api_key=), and never
// to another origin, which would be handed the request and its
// credentials.
func sameOrigin(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		return fmt.Errorf("the upstream redirected to another origin (%s://%s): not followed", req.URL.Scheme, termtext.Printable(req.URL.Host))
	}
	if len(via) > MaxRedirects {
		return fmt.Errorf("more than %d redirects (toolrec.MaxRedirects)", MaxRedirects)
	}
	return nil
}

// Target is what the upstream was dialled with.
func (u *Upstream) Target() Target { return u.t }

// Tools are the upstream's tools, in the order it listed them.
func (u *Upstream) Tools() []plan.Tool { return u.tools }

// Exchanges are the calls forwarded and answered so far, in the order
// they started.
func (u *Upstream) Exchanges() []Exchange {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(u.log), func(e Exchange) bool { return !e.done })
}

// CloseTimeout bounds how long Close waits for an MCP session to end.
const CloseTimeout = 5 * time.Second

// Dropped is how many calls were answered but not kept (MaxExchanges).
func (u *Upstream) Dropped() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.dropped
}

// Close ends the connection: an MCP command's input is closed, then it is
// terminated; a session by URL is ended (streamable HTTP: DELETE), its
// streams cut. It returns within about CloseTimeout.
func (u *Upstream) Close() error {
	if u.session == nil {
		return nil
	}
	if u.t.SSE {
		// An HTTP+SSE session has nothing to say when it ends: its
		// stream is cut, which ends it.
		u.stop()
	}
	done := make(chan error, 1)
	go func() { done <- u.session.Close() }()
	select {
	case err := <-done:
		u.stop()
		return err
	case <-time.After(CloseTimeout):
		u.stop()
		select {
		case err := <-done:
			return err
		case <-time.After(CloseTimeout):
			return fmt.Errorf("the session with %s did not end within %s", u.t.Label(), 2*CloseTimeout)
		}
	}
}

// stoppable carries every request to an MCP server by URL under a
// context of the Upstream's, which Close cancels: go-sdk's client would
// otherwise wait on a stream the server keeps open.
type stoppable struct {
	ctx context.Context
	rt  http.RoundTripper
}

func (s *stoppable) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	unhook := context.AfterFunc(s.ctx, cancel)
	resp, err := s.rt.RoundTrip(r.WithContext(ctx))
	if err != nil {
		unhook()
		cancel()
		return nil, err
	}
	trip, _ := r.Context().Value(tripKey{}).(*atomic.Bool)
	resp.Body = &stopBody{ReadCloser: &boundedBody{ReadCloser: resp.Body, events: strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream"), trip: trip}, end: func() { unhook(); cancel() }}
	return resp, nil
}

// ErrAnswerTooLarge is the read error of an MCP server's answer over
// MaxAnswer: a JSON body, or one event of a stream (an endless data:
// line, or data: lines that never end an event).
var ErrAnswerTooLarge = fmt.Errorf("an answer of the MCP server is over %d MiB (toolrec.MaxAnswer); the rest is not read", MaxAnswer>>20)

// boundedBody bounds what go-sdk's client reads of one answer: it keeps
// a JSON body, or the event being read, whole until it ends.
type boundedBody struct {
	io.ReadCloser
	events bool  // an event stream: each event bounded, not the stream
	n      int64 // bytes of the body, or of the current event
	line   int64 // bytes of the current line
	cr     bool  // the last byte was a carriage return
	err    error
	trip   *atomic.Bool // set when the bound trips (the call's, when known)
}

// tripKey is the context key of a call's trip flag.
type tripKey struct{}

func (b *boundedBody) tooLarge() (int, error) {
	b.err = ErrAnswerTooLarge
	if b.trip != nil {
		b.trip.Store(true)
	}
	return 0, b.err
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	if !b.events {
		if b.n += int64(n); b.n > MaxAnswer {
			return b.tooLarge()
		}
		return n, err
	}
	for _, c := range p[:n] {
		switch {
		case c == '\n' && b.cr:
			// the \n of \r\n: the line ended at the \r
		case c == '\n' || c == '\r':
			if b.line == 0 {
				b.n = 0 // a blank line ends the event
			}
			b.line = 0
		default:
			b.line++
		}
		b.cr = c == '\r'
		if b.n++; b.n > MaxAnswer {
			return b.tooLarge()
		}
	}
	return n, err
}

type stopBody struct {
	io.ReadCloser
	end func()
}

func (b *stopBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

// For is the answerer of one case: it forwards each call and keeps the
// exchange under the case's suite file and name.
func (u *Upstream) For(suite, name string) tool.Answerer {
	return &caseAnswerer{u: u, suite: suite, name: name}
}

type caseAnswerer struct {
	u           *Upstream
	suite, name string
}

func (a *caseAnswerer) Answer(ctx context.Context, c tool.Call, args any, perr error) tool.Result {
	if perr != nil {
		return tool.Result{Content: "arguments are not JSON: " + perr.Error(), IsError: true, Outcome: tool.Error, Entry: -1}
	}
	// The exchange takes its place as the call starts: the recording is
	// in the order calls were made, whenever they end.
	a.u.mu.Lock()
	at := -1
	if len(a.u.log) < MaxExchanges {
		at = len(a.u.log)
		a.u.log = append(a.u.log, Exchange{})
	} else {
		a.u.dropped++
	}
	a.u.mu.Unlock()
	ans, err := a.u.Call(ctx, c.Name, args)
	ex := Exchange{Suite: a.suite, Case: a.name, Tool: c.Name, Args: args, Answer: ans, done: true}
	if err != nil {
		ex.Err = err.Error()
	}
	if at >= 0 {
		a.u.mu.Lock()
		a.u.log[at] = ex
		a.u.mu.Unlock()
	}
	if err != nil {
		return tool.Result{Content: "dryfire record-tools: " + err.Error(), IsError: true, Outcome: tool.Error, Entry: -1}
	}
	return ans.Result()
}

// Result is the answer as a tool call's result, as the rule recorded
// from it will give it: one text block is its text, an error its text
// as an error, other blocks as they are.
func (a Answer) Result() tool.Result {
	text, one := a.Text()
	switch {
	case a.IsError:
		return tool.Result{Content: text, IsError: true, Outcome: tool.Error, Entry: -1}
	case one:
		return tool.Result{Content: text, Outcome: tool.Return, Entry: -1}
	}
	return tool.Result{Content: text, Blocks: []byte(value.Canonical(a.Blocks)), Outcome: tool.Content, Entry: -1}
}

// Text is the answer's text (its blocks as mock.RenderContent shows
// them), and whether the answer is exactly one text block.
func (a Answer) Text() (string, bool) {
	if len(a.Blocks) == 1 {
		if m, ok := a.Blocks[0].(map[string]any); ok && m["type"] == "text" && len(m) == 2 {
			s, ok := m["text"].(string)
			return s, ok
		}
	}
	return mock.RenderContent(a.Blocks), false
}

// Call forwards one call and returns the upstream's answer.
func (u *Upstream) Call(ctx context.Context, name string, args any) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, u.t.CallTimeout)
	defer cancel()
	if u.client != nil {
		return u.callHTTP(ctx, name, args)
	}
	trip := new(atomic.Bool)
	ctx = context.WithValue(ctx, tripKey{}, trip)
	res, err := u.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(value.Canonical(args))})
	if err != nil && trip.Load() {
		// go-sdk ends the call without the read error: say which bound.
		err = ErrAnswerTooLarge
	}
	if err != nil {
		return Answer{}, fmt.Errorf("calling %s on %s: %w", termtext.Printable(name), u.t.Label(), outside(err))
	}
	b, err := json.Marshal(res.Content)
	blocks, perr := value.Parse(b)
	if err := cmp.Or(err, perr); err != nil {
		return Answer{}, fmt.Errorf("reading the answer of %s: %w", name, err)
	}
	bl, _ := blocks.([]any)
	if bl == nil {
		bl = []any{}
	}
	return Answer{IsError: res.IsError, Blocks: bl}, nil
}

// callHTTP posts the arguments to BASE/tools/NAME. A 2xx answer of the
// shape dryfire serve answers ({"content": TEXT, "is_error": BOOL}) is
// that; any other 2xx answer's body is the result's text, and the body of
// any other status an error result's.
func (u *Upstream) callHTTP(ctx context.Context, name string, args any) (Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.httpURL("/tools/"+url.PathEscape(name)), bytes.NewReader([]byte(value.Canonical(args))))
	if err != nil {
		return Answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := u.client.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("calling %s on %s: %w", termtext.Printable(name), u.t.Label(), outside(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return Answer{}, fmt.Errorf("reading the answer of %s: %w", name, err)
	}
	if len(body) > MaxAnswer {
		return Answer{}, fmt.Errorf("the answer of %s is over %d MiB (MaxAnswer)", name, MaxAnswer>>20)
	}
	text, isErr := string(body), resp.StatusCode/100 != 2
	var env struct {
		Content *string `json:"content"`
		IsError bool    `json:"is_error"`
	}
	if !isErr && json.Unmarshal(body, &env) == nil && env.Content != nil {
		text, isErr = *env.Content, env.IsError
	}
	return Answer{IsError: isErr, Blocks: []any{map[string]any{"type": "text", "text": text}}}, nil
}
