package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Ollama's own API: POST {host}/api/chat (OLLAMA_HOST, by default
// http://127.0.0.1:11434; the ollama Python client reads it, the JS one is
// given its host), no key.
//
//   - A request: model, messages ({role, content}; an assistant's
//     tool_calls, {function: {name, arguments}} with the arguments an
//     object and no id; a tool result's tool_name), tools (Chat
//     Completions' {type: function, function}), stream (true unless false:
//     the loop sends false unless agent.params.stream is true), and options,
//     format, keep_alive, think at the top (agent.params).
//   - An answer: {model, created_at, message, done_reason, done, and the
//     durations and counts}; streamed, one such JSON object a line
//     (application/x-ndjson), the last with done: true and the counts.
//     Usage is prompt_eval_count in, eval_count out.
//   - A call has no id: a tool result names its tool, and is matched to
//     the earliest call of that name not yet answered (as Gemini's).
//   - An error is {"error": "message"}.

// OllamaRoute is Ollama's chat route.
const OllamaRoute = "/api/chat"

// ollamaHost is a host as the ollama clients read OLLAMA_HOST: a scheme
// and a port (11434) when it names none.
func ollamaHost(host string) string {
	host = strings.TrimRight(host, "/")
	if host == "" {
		return "http://127.0.0.1:11434"
	}
	scheme, rest, ok := strings.Cut(host, "://")
	if !ok {
		scheme, rest = "http", host
	}
	hostport, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(hostport, ':'); i < 0 || strings.HasSuffix(hostport, "]") {
		port := "11434"
		if ok {
			port = map[bool]string{true: "443", false: "80"}[scheme == "https"]
		}
		hostport += ":" + port
	}
	if path != "" {
		path = "/" + path
	}
	return scheme + "://" + hostport + path
}

// ollamaCall writes a call.
func (c *caller) ollamaCall(req *model.Request) (*post, error) {
	body, err := chatRequest(req, true)
	if err != nil {
		return nil, err
	}
	data, err := appendParams(append(body, jsonKV{"stream", streamed(req.Params)}), req.Params, []string{"stream"}).MarshalJSON()
	return &post{ollamaHost(c.o.BaseURL) + OllamaRoute, nil, data, func(d []byte) (*model.Response, error) {
		return parseOllama(d, assistantTurns(req.Messages)+1)
	}}, err
}

// ollamaAnswer is an answer of Ollama's chat, whole or one line of a
// stream.
type ollamaAnswer struct {
	Model      string        `json:"model"`
	CreatedAt  string        `json:"created_at"`
	Message    ollamaMessage `json:"message"`
	DoneReason string        `json:"done_reason,omitempty"`
	Done       bool          `json:"done"`
	Total      int64         `json:"total_duration,omitempty"`
	Load       int64         `json:"load_duration,omitempty"`
	PromptEval int           `json:"prompt_eval_count,omitempty"`
	PromptTime int64         `json:"prompt_eval_duration,omitempty"`
	Eval       int           `json:"eval_count,omitempty"`
	EvalTime   int64         `json:"eval_duration,omitempty"`
	Error      string        `json:"error,omitempty"`
}

type ollamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
}

type ollamaToolCall struct {
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// parseOllama reads an answer to the turn-th request.
func parseOllama(data []byte, turn int) (*model.Response, error) {
	var a ollamaAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("ollama: the answer is not a chat answer (%v): %s", err, excerpt(data))
	}
	if a.Error != "" {
		return nil, fmt.Errorf("ollama: the answer carries an error: %s", a.Error)
	}
	r := &model.Response{Text: a.Message.Content, Usage: model.Usage{InputTokens: a.PromptEval, OutputTokens: a.Eval}}
	for i, c := range a.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, tool.Call{ID: fmt.Sprintf("call_%d_%d", turn, i+1), Name: c.Function.Name, Args: rawArgs(c.Function.Arguments)})
	}
	if a.DoneReason == "length" {
		r.Notes = append(r.Notes, "ollama stopped at the token limit (done_reason length): the answer is cut short; raise options.num_predict in agent.params")
	}
	return r, nil
}

// foldOllama folds a streamed answer (a JSON object a line) into one:
// the content and thinking joined, the tool calls gathered, the last
// line's reason and counts. A stream without its done line was cut short.
func foldOllama(data []byte) ([]byte, error) {
	var whole ollamaAnswer
	for line := range bytes.Lines(data) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var a ollamaAnswer
		if err := json.Unmarshal(line, &a); err != nil {
			return nil, fmt.Errorf("a line of the stream is not JSON (%v): %s", err, excerpt(line))
		}
		if a.Error != "" {
			return nil, fmt.Errorf("the answer's stream carries an error: %s", a.Error)
		}
		content, thinking, calls := whole.Message.Content+a.Message.Content, whole.Message.Thinking+a.Message.Thinking, append(whole.Message.ToolCalls, a.Message.ToolCalls...)
		whole = a
		whole.Message.Content, whole.Message.Thinking, whole.Message.ToolCalls = content, thinking, calls
		if a.Done {
			return Marshal(whole)
		}
	}
	return nil, errStreamCut
}

// writeOllama writes r as Ollama answers: one object, or streamed, a line
// per piece of text, one with the tool calls, the last with the counts.
func writeOllama(r *Reply) (body []byte, events [][]byte) {
	last := ollamaAnswer{Model: r.Model, CreatedAt: "2026-01-01T00:00:00Z", Message: ollamaMessage{Role: "assistant", Content: r.Text}, DoneReason: "stop", Done: true,
		Total: 1000000, Load: 1000, PromptEval: r.Usage.InputTokens, PromptTime: 1000, Eval: r.Usage.OutputTokens, EvalTime: 1000}
	for _, c := range r.Calls {
		var tc ollamaToolCall
		tc.Function.Name, tc.Function.Arguments = c.Name, json.RawMessage(c.Args)
		last.Message.ToolCalls = append(last.Message.ToolCalls, tc)
	}
	if !r.Stream {
		return marshal(last), nil
	}
	line := func(a ollamaAnswer) { events = append(events, append(marshal(a), '\n')) }
	piece := ollamaAnswer{Model: r.Model, CreatedAt: last.CreatedAt, Message: ollamaMessage{Role: "assistant"}}
	for _, p := range pieces(r.Text) {
		piece.Message.Content = p
		line(piece)
	}
	if len(r.Calls) > 0 {
		piece.Message.Content, piece.Message.ToolCalls = "", last.Message.ToolCalls
		line(piece)
	}
	last.Message.Content, last.Message.ToolCalls = "", nil
	line(last)
	return nil, events
}

// readOllama reads an Ollama chat request: its conversation, tools and
// whether it streams (it does unless "stream": false).
func readOllama(w *model.Request, m map[string]any, _ *url.URL, _ []byte) {
	w.Params["stream"] = m["stream"] != false
	w.Tools = readChatTools(m)
	pending := map[string][]string{} // name → ids of calls not yet answered
	for i, raw := range list(m["messages"]) {
		msg, _ := raw.(map[string]any)
		text, _ := msg["content"].(string)
		switch msg["role"] {
		case "system":
			w.System = text
		case "user":
			w.Messages = append(w.Messages, model.Message{Role: model.User, Text: text})
		case "assistant":
			a := model.Message{Role: model.Assistant, Text: text}
			for k, c := range list(msg["tool_calls"]) {
				f, _ := c.(map[string]any)["function"].(map[string]any)
				name, _ := f["name"].(string)
				id := name + "#" + strconv.Itoa(i) + "." + strconv.Itoa(k)
				a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name, Args: callArgs(f["arguments"], "{}")})
				pending[name] = append(pending[name], id)
			}
			w.Messages = append(w.Messages, a)
		case "tool":
			name, _ := msg["tool_name"].(string)
			id := name
			if ids := pending[name]; len(ids) > 0 {
				id, pending[name] = ids[0], ids[1:]
			}
			w.Messages = append(w.Messages, model.Message{Role: model.ToolRole, CallID: id, Text: text})
		}
	}
}
