package modelserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// script is what the fake model says: a 3-turn conversation (two tool
// calls, then an answer) and a 1-turn one.
var script = fakeapi.Script{
	"Please refund order A-991.": {
		{Text: "Let me look.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120.5}`}}},
		{Text: "Your refund R-1 for order A-991 is done — 120.50 €."},
	},
	"When are you open?": {
		{Text: "We are open 9 to 5, Monday to Friday."},
	},
}

// flavour is an API and whether its calls stream.
type flavour struct {
	api    wire.API
	stream bool
}

func (f flavour) String() string {
	if f.stream {
		return string(f.api) + "/stream"
	}
	return string(f.api) + "/json"
}

var flavours = []flavour{{wire.OpenAIChat, false}, {wire.OpenAIChat, true}, {wire.OpenAIResponses, false}, {wire.OpenAIResponses, true}, {wire.Anthropic, false}, {wire.Anthropic, true}}

// conversation is the 3 requests an agent makes, whatever the answers'
// ids (the fake finds a conversation by its first user message and its
// turn by the assistant messages so far).
func conversation(api wire.API, stream bool) []string {
	var reqs []string
	switch api {
	case wire.OpenAIChat:
		tools := `"tools":[{"type":"function","function":{"name":"lookup_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}}}}},{"type":"function","function":{"name":"issue_refund"}}]`
		msgs := []string{`{"role":"system","content":"You are a support agent."}`, `{"role":"user","content":"Please refund order A-991."}`}
		turns := [][]string{nil,
			{`{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\":\"A-991\"}"}}]}`, `{"role":"tool","tool_call_id":"call_1","content":"{\"tier\":\"gold\"}"}`},
			{`{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"issue_refund","arguments":"{\"order_id\":\"A-991\",\"amount\":120.5}"}}]}`, `{"role":"tool","tool_call_id":"call_2","content":"R-1"}`},
		}
		extra := ""
		if stream {
			extra = `,"stream":true,"stream_options":{"include_usage":true}`
		}
		for _, t := range turns {
			msgs = append(msgs, t...)
			reqs = append(reqs, `{"model":"gpt-test","messages":[`+strings.Join(msgs, ",")+`],`+tools+`,"tool_choice":"auto"`+extra+`}`)
		}
	case wire.OpenAIResponses:
		tools := `"tools":[{"type":"function","name":"lookup_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}}},"strict":false},{"type":"function","name":"issue_refund","parameters":{},"strict":false}]`
		items := []string{`{"role":"user","content":[{"type":"input_text","text":"Please refund order A-991."}]}`}
		turns := [][]string{nil,
			{`{"type":"function_call","call_id":"call_1","name":"lookup_order","arguments":"{\"order_id\":\"A-991\"}"}`, `{"type":"function_call_output","call_id":"call_1","output":"{\"tier\":\"gold\"}"}`},
			{`{"type":"function_call","call_id":"call_2","name":"issue_refund","arguments":"{\"order_id\":\"A-991\",\"amount\":120.5}"}`, `{"type":"function_call_output","call_id":"call_2","output":"R-1"}`},
		}
		extra := ""
		if stream {
			extra = `,"stream":true`
		}
		for _, t := range turns {
			items = append(items, t...)
			reqs = append(reqs, `{"model":"gpt-test","instructions":"You are a support agent.","input":[`+strings.Join(items, ",")+`],`+tools+`,"store":false`+extra+`}`)
		}
	case wire.Anthropic:
		tools := `"tools":[{"name":"lookup_order","input_schema":{"type":"object","properties":{"order_id":{"type":"string"}}}},{"name":"issue_refund","input_schema":{"type":"object"}}]`
		msgs := []string{`{"role":"user","content":"Please refund order A-991."}`}
		turns := [][]string{nil,
			{`{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"lookup_order","input":{"order_id":"A-991"}}]}`, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"{\"tier\":\"gold\"}"}]}`},
			{`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"issue_refund","input":{"order_id":"A-991","amount":120.5}}]}`, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"R-1"}]}`},
		}
		extra := ""
		if stream {
			extra = `,"stream":true`
		}
		for _, t := range turns {
			msgs = append(msgs, t...)
			reqs = append(reqs, `{"model":"claude-test","max_tokens":1024,"system":"You are a support agent.","messages":[`+strings.Join(msgs, ",")+`],`+tools+`,"metadata":{"user_id":"u-42"}`+extra+`}`)
		}
	}
	return reqs
}

func newFake(api wire.API, opts ...fakeapi.Option) *fakeapi.Server {
	switch api {
	case wire.OpenAIResponses:
		return fakeapi.NewOpenAIResponses(script, opts...)
	case wire.Anthropic:
		return fakeapi.NewAnthropic(script, opts...)
	case wire.Gemini:
		return fakeapi.NewGemini(script, opts...)
	case wire.Ollama:
		return fakeapi.NewOllama(script, opts...)
	case wire.Bedrock:
		return fakeapi.NewBedrock(script, opts...)
	}
	return fakeapi.NewOpenAIChat(script, opts...)
}

// baseURL is the base URL an SDK of api is given for a server root.
func baseURL(api wire.API, root string) string {
	if api == wire.Anthropic || api == wire.Gemini || api == wire.Ollama || api == wire.Bedrock {
		return root
	}
	return root + "/v1"
}

// path is api's route.
func path(api wire.API) string {
	for p, a := range wire.Routes {
		if a == api {
			return p
		}
	}
	panic("no route")
}

// reply is an answer as a client sees it.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// post sends one request as an SDK would: to base (a server root, maybe
// with a prefix) + the API's route, with its headers.
func post(t testing.TB, client *http.Client, root string, api wire.API, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, root+path(api), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if api == wire.Anthropic {
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("X-Api-Key", DummyKey)
	} else {
		req.Header.Set("Authorization", "Bearer "+DummyKey)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, data}
}

// serve mounts e under prefix on a loopback server, as dryfire serve
// does, and returns the server root with the prefix.
func serve(t testing.TB, e http.Handler, prefix string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, e))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + prefix
}

// dialCounter is a live transport that counts the connections it opens.
type dialCounter struct {
	*http.Transport
	dials atomic.Int64
}

func newDialCounter() *dialCounter {
	d := &dialCounter{}
	d.Transport = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	return d
}

// deadUpstream is an address where connections are counted and closed:
// where the upstream was, once stopped.
func deadUpstream(t *testing.T) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return "http://" + l.Addr().String(), &n
}

// caseOptions are the options of the case "refund" of support.dryfire.yaml
// in dir.
func caseOptions(dir string, mode cassette.Mode) Options {
	suite := filepath.Join(dir, "support.dryfire.yaml")
	return Options{Config: cassette.Config{File: cassette.Paths(suite, []string{"refund"})[0], SuiteFile: suite, Case: "refund", Mode: mode}, Env: []string{}}
}

func mustNew(t testing.TB, o Options) *Endpoint {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// upstreamOptions points every API of o at root (a fake's URL).
func upstreamOptions(o Options, root string) Options {
	o.BaseURLs = map[string]string{"OPENAI_BASE_URL": root + "/v1", "ANTHROPIC_BASE_URL": root}
	return o
}

// The endpoint's outcome read piece by piece (model.Recorder.End), and its
// cassette saved, as the tests ask.
func (e *Endpoint) Calls() []model.Called { return e.End().Calls }
func (e *Endpoint) Turns() int            { return e.End().Turns }
func (e *Endpoint) Usage() model.Usage    { return e.End().Usage }
func (e *Endpoint) Failure() error        { return e.End().Live }
func (e *Endpoint) Finish() (bool, error) { return e.Save() }
func (e *Endpoint) Problem() *cassette.ReplayError {
	p, _ := e.End().Replay.(*cassette.ReplayError)
	return p
}
func (e *Endpoint) Unplayed() *cassette.ReplayError {
	p, _ := e.End().Unplayed.(*cassette.ReplayError)
	return p
}
func (e *Endpoint) Stats() (played, recorded, live int) {
	o := e.End()
	return o.Played, o.Recorded, o.Sent
}
func (e *Endpoint) ScriptAnswers() []model.ScriptAnswer { return e.End().Served }
func (e *Endpoint) ScriptError() error                  { return e.End().Script }
func (e *Endpoint) Faults() []model.Injected            { return e.End().Faults }
