package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Amazon Bedrock's Converse API: POST {endpoint}/model/{modelId}/converse
// (JSON) and /converse-stream (an AWS event stream, aws.go), signed with
// Signature Version 4 (service bedrock; AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION), or with a Bedrock
// API key as a bearer token (AWS_BEARER_TOKEN_BEDROCK). The endpoint is
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME when set (as the AWS SDKs read it),
// else https://bedrock-runtime.REGION.amazonaws.com.
//
//   - A request: messages ({role, content: [{text} | {toolUse: {toolUseId,
//     name, input}} | {toolResult: {toolUseId, content: [{text} | {json}],
//     status}}]}), system ([{text}]), toolConfig ({tools: [{toolSpec:
//     {name, description, inputSchema: {json}}}]}); agent.params at the
//     top (inferenceConfig, additionalModelRequestFields, …).
//   - An answer: {output: {message}, stopReason, usage: {inputTokens,
//     outputTokens, totalTokens}, metrics}; streamed, the events
//     messageStart, contentBlockStart (a tool use's id and name),
//     contentBlockDelta (text, or a piece of a tool use's input),
//     contentBlockStop, messageStop (the stop reason), metadata (usage).
//   - An error: {"message"} with its type in x-amzn-ErrorType.

// BedrockPath reads a Converse route: /model/MODEL/converse or
// /converse-stream (MODEL escaped: an ARN holds / and :).
func BedrockPath(path string) (modelID string, stream, ok bool) {
	rest, found := strings.CutPrefix(path, "/model/")
	if !found {
		return "", false, false
	}
	if m, s := strings.CutSuffix(rest, "/converse-stream"); s {
		rest, stream = m, true
	} else if m, c := strings.CutSuffix(rest, "/converse"); c {
		rest = m
	} else {
		return "", false, false
	}
	id, err := url.PathUnescape(rest)
	return id, stream, err == nil && id != ""
}

// Wire shapes of Converse, for requests and answers alike.
type (
	bedrockBlock struct {
		Text       *string            `json:"text,omitempty"`
		ToolUse    *bedrockToolUse    `json:"toolUse,omitempty"`
		ToolResult *bedrockToolResult `json:"toolResult,omitempty"`
	}
	bedrockToolUse struct {
		Input     json.RawMessage `json:"input"`
		Name      string          `json:"name"`
		ToolUseID string          `json:"toolUseId"`
	}
	bedrockToolResult struct {
		Content   []bedrockResultPart `json:"content"`
		Status    string              `json:"status,omitempty"`
		ToolUseID string              `json:"toolUseId"`
	}
	bedrockResultPart struct {
		JSON json.RawMessage `json:"json,omitempty"`
		Text *string         `json:"text,omitempty"`
	}
	bedrockMessage struct {
		Content []bedrockBlock `json:"content"`
		Role    string         `json:"role"`
	}
	bedrockUsage struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
		TotalTokens  int `json:"totalTokens"`
	}
	bedrockMetrics struct {
		LatencyMs int `json:"latencyMs"`
	}
	bedrockAnswer struct {
		Metrics bedrockMetrics `json:"metrics"`
		Output  struct {
			Message bedrockMessage `json:"message"`
		} `json:"output"`
		StopReason string       `json:"stopReason"`
		Usage      bedrockUsage `json:"usage"`
	}
	bedrockRequest struct {
		Messages []bedrockMessage `json:"messages"`
		System   []struct {
			Text string `json:"text"`
		} `json:"system"`
	}
)

func textOf(s string) *string { return &s }

// bedrockMessages are the conversation as Converse takes it: the tool
// results after an assistant turn one user message of toolResult blocks.
func bedrockMessages(msgs []model.Message) ([]bedrockMessage, error) {
	var out []bedrockMessage
	for i, m := range msgs {
		var b bedrockBlock
		switch m.Role {
		case model.User:
			b.Text = textOf(m.Text)
		case model.ToolRole:
			status := ""
			if m.IsError {
				status = "error"
			}
			b.ToolResult = &bedrockToolResult{ToolUseID: m.CallID, Content: []bedrockResultPart{{Text: textOf(m.Text)}}, Status: status}
		case model.Assistant:
			a := bedrockMessage{Role: "assistant"}
			if m.Text != "" {
				a.Content = append(a.Content, bedrockBlock{Text: textOf(m.Text)})
			}
			for _, c := range m.ToolCalls {
				input, err := toolInput(c)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				a.Content = append(a.Content, bedrockBlock{ToolUse: &bedrockToolUse{ToolUseID: c.ID, Name: c.Name, Input: input}})
			}
			out = append(out, a)
			continue
		default:
			return nil, fmt.Errorf("message %d has role %q, which the bedrock provider cannot send", i, m.Role)
		}
		if n := len(out); n > 0 && out[n-1].Role == "user" {
			out[n-1].Content = append(out[n-1].Content, b)
			continue
		}
		out = append(out, bedrockMessage{Role: "user", Content: []bedrockBlock{b}})
	}
	return out, nil
}

// bedrockCall writes a call (signed by bedrockSigner).
func (c *caller) bedrockCall(req *model.Request) (*post, error) {
	msgs, err := bedrockMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	body := jsonObject{{"messages", msgs}}
	if req.System != "" {
		body = append(body, jsonKV{"system", []any{jsonObject{{"text", req.System}}}})
	}
	if len(req.Tools) > 0 {
		tools := make([]any, len(req.Tools))
		for i, t := range req.Tools {
			spec := jsonObject{{"name", t.Name}}
			if t.Description != "" {
				spec = append(spec, jsonKV{"description", t.Description})
			}
			tools[i] = jsonObject{{"toolSpec", append(spec, jsonKV{"inputSchema", jsonObject{{"json", schemaOf(t)}}})}}
		}
		body = append(body, jsonKV{"toolConfig", jsonObject{{"tools", tools}}})
	}
	data, err := appendParams(body, req.Params, []string{"stream"}).MarshalJSON()
	method := "/converse"
	if streamed(req.Params) {
		method = "/converse-stream"
	}
	to := strings.TrimRight(c.o.BaseURL, "/") + "/model/" + url.PathEscape(req.Model) + method
	return &post{to, http.Header{"Content-Type": {"application/json"}}, data, parseBedrock}, err
}

// bedrockSigner signs each attempt with the environment's Bedrock API
// key, else its AWS credentials (SigV4).
func bedrockSigner(getenv func(string) string) func(r *http.Request, body []byte) {
	keys := awsKeysOf(getenv)
	return func(r *http.Request, body []byte) {
		if token := getenv("AWS_BEARER_TOKEN_BEDROCK"); token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
			return
		}
		keys.sign(r, body, "bedrock", time.Now())
	}
}

// bedrockURL is the endpoint of Bedrock's runtime in the environment.
func bedrockURL(getenv func(string) string) string {
	if u := getenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME"); u != "" {
		return u
	}
	if u := getenv("AWS_ENDPOINT_URL"); u != "" {
		return u
	}
	return "https://bedrock-runtime." + awsKeysOf(getenv).region + ".amazonaws.com"
}

// parseBedrock reads a Converse answer.
func parseBedrock(data []byte) (*model.Response, error) {
	var a bedrockAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("bedrock: the answer is not a Converse answer (%v): %s", err, excerpt(data))
	}
	content, _ := json.Marshal(a.Output.Message.Content)
	r := &model.Response{Raw: content, Usage: model.Usage{InputTokens: a.Usage.InputTokens, OutputTokens: a.Usage.OutputTokens}}
	for _, b := range a.Output.Message.Content {
		if b.Text != nil {
			r.Text += *b.Text
		}
		if u := b.ToolUse; u != nil {
			r.ToolCalls = append(r.ToolCalls, tool.Call{ID: u.ToolUseID, Name: u.Name, Args: rawArgs(u.Input)})
		}
	}
	switch a.StopReason {
	case "max_tokens":
		if len(r.ToolCalls) > 0 {
			return nil, fmt.Errorf("bedrock stopped at the token limit (stopReason max_tokens) while writing a tool call: its input may be incomplete, so it is not run; raise inferenceConfig.maxTokens in agent.params")
		}
		r.Notes = append(r.Notes, "bedrock stopped at the token limit (stopReason max_tokens): the answer is cut short; raise inferenceConfig.maxTokens in agent.params")
	case "guardrail_intervened", "content_filtered":
		r.Notes = append(r.Notes, "bedrock withheld content (stopReason "+a.StopReason+"): the answer may be incomplete")
	}
	return r, nil
}

// foldBedrock folds a ConverseStream answer into the Converse one: each
// block from its start and deltas, the stop reason, the usage.
func foldBedrock(data []byte) ([]byte, error) {
	ms, err := readAWSEvents(data)
	if err != nil {
		return nil, err
	}
	var a bedrockAnswer
	var input []*strings.Builder
	var ev struct {
		Index int `json:"contentBlockIndex"`
		Start struct {
			ToolUse *bedrockToolUse `json:"toolUse"`
		} `json:"start"`
		Delta struct {
			Text    *string `json:"text"`
			ToolUse *struct {
				Input string `json:"input"`
			} `json:"toolUse"`
		} `json:"delta"`
		StopReason string         `json:"stopReason"`
		Usage      bedrockUsage   `json:"usage"`
		Metrics    bedrockMetrics `json:"metrics"`
		Role       string         `json:"role"`
	}
	stopped := false
	for _, m := range ms {
		ev.Start.ToolUse, ev.Delta.Text, ev.Delta.ToolUse = nil, nil, nil
		if err := json.Unmarshal(m.payload, &ev); err != nil {
			return nil, fmt.Errorf("an event of the stream is not JSON (%v): %s", err, excerpt(m.payload))
		}
		for ev.Index >= len(a.Output.Message.Content) && ev.Index < 1024 {
			a.Output.Message.Content = append(a.Output.Message.Content, bedrockBlock{})
			input = append(input, &strings.Builder{})
		}
		b := &a.Output.Message.Content[min(ev.Index, len(a.Output.Message.Content)-1)]
		switch m.headers[":event-type"] {
		case "messageStart":
			a.Output.Message.Role = ev.Role
		case "contentBlockStart":
			b.ToolUse = ev.Start.ToolUse
		case "contentBlockDelta":
			if ev.Delta.Text != nil {
				b.Text = textOf(deref(b.Text) + *ev.Delta.Text)
			}
			if ev.Delta.ToolUse != nil {
				input[ev.Index].WriteString(ev.Delta.ToolUse.Input)
			}
		case "contentBlockStop":
			if b.ToolUse != nil {
				b.ToolUse.Input = json.RawMessage(input[ev.Index].String())
			}
		case "messageStop":
			a.StopReason, stopped = ev.StopReason, true
		case "metadata":
			a.Usage, a.Metrics = ev.Usage, ev.Metrics
		}
	}
	if !stopped {
		return nil, errStreamCut
	}
	return Marshal(a)
}

// writeBedrock writes r as Converse answers: JSON, or streamed as the
// AWS event stream, a message an event (text in pieces, a tool use's
// input in one delta, as Bedrock sends it).
func writeBedrock(r *Reply) (body []byte, events [][]byte) {
	var a bedrockAnswer
	a.Output.Message.Role, a.StopReason, a.Metrics.LatencyMs = "assistant", "end_turn", 1
	a.Usage = bedrockUsage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens, TotalTokens: r.Usage.InputTokens + r.Usage.OutputTokens}
	if r.Text != "" || len(r.Calls) == 0 {
		a.Output.Message.Content = append(a.Output.Message.Content, bedrockBlock{Text: textOf(r.Text)})
	}
	for _, c := range r.Calls {
		a.Output.Message.Content = append(a.Output.Message.Content, bedrockBlock{ToolUse: &bedrockToolUse{ToolUseID: c.ID, Name: c.Name, Input: json.RawMessage(c.Args)}})
		a.StopReason = "tool_use"
	}
	if !r.Stream {
		return marshal(a), nil
	}
	emit := func(typ string, v any) { events = append(events, awsEvent(typ, marshal(v))) }
	emit("messageStart", map[string]string{"role": "assistant"})
	for i, b := range a.Output.Message.Content {
		if u := b.ToolUse; u != nil {
			emit("contentBlockStart", map[string]any{"contentBlockIndex": i, "start": map[string]any{"toolUse": map[string]string{"name": u.Name, "toolUseId": u.ToolUseID}}})
			emit("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"toolUse": map[string]string{"input": string(u.Input)}}})
		} else {
			for _, p := range pieces(*b.Text) {
				emit("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]string{"text": p}})
			}
		}
		emit("contentBlockStop", map[string]int{"contentBlockIndex": i})
	}
	emit("messageStop", map[string]string{"stopReason": a.StopReason})
	emit("metadata", map[string]any{"metrics": a.Metrics, "usage": a.Usage})
	return nil, events
}

// readBedrock reads a Converse request: its conversation (tool results
// are tool messages, their text or JSON), system prompt and tools; the
// model and whether it streams are its path's.
func readBedrock(w *model.Request, m map[string]any, u *url.URL, body []byte) {
	var stream bool
	if w.Model, stream, _ = BedrockPath(u.Path); stream {
		w.Params["stream"] = true
	}
	var req bedrockRequest
	json.Unmarshal(body, &req)
	for _, s := range req.System {
		w.System += s.Text
	}
	tc, _ := m["toolConfig"].(map[string]any)
	for _, t := range list(tc["tools"]) {
		tm, _ := t.(map[string]any)
		spec, _ := tm["toolSpec"].(map[string]any)
		if name, _ := spec["name"].(string); name != "" {
			d := toolDef(spec, name)
			in, _ := spec["inputSchema"].(map[string]any)
			d.InputSchema = in["json"]
			w.Tools = append(w.Tools, d)
		}
	}
	for _, m := range req.Messages {
		var text []string
		a := model.Message{Role: model.Assistant}
		for _, b := range m.Content {
			switch {
			case b.Text != nil:
				text = append(text, *b.Text)
			case b.ToolUse != nil:
				a.ToolCalls = append(a.ToolCalls, tool.Call{ID: b.ToolUse.ToolUseID, Name: b.ToolUse.Name, Args: string(b.ToolUse.Input)})
			case b.ToolResult != nil:
				var out bytes.Buffer
				for _, p := range b.ToolResult.Content {
					out.WriteString(deref(p.Text))
					out.Write(p.JSON)
				}
				w.Messages = append(w.Messages, model.Message{Role: model.ToolRole, CallID: b.ToolResult.ToolUseID, Text: out.String(), IsError: b.ToolResult.Status == "error"})
			}
		}
		if m.Role == "assistant" {
			a.Text = strings.Join(text, "\n")
			w.Messages = append(w.Messages, a)
		} else if len(text) > 0 {
			w.Messages = append(w.Messages, model.Message{Role: model.User, Text: strings.Join(text, "\n")})
		}
	}
}

// bedrockErrorType is the x-amzn-ErrorType of a status.
func bedrockErrorType(status int) string {
	switch status {
	case 400:
		return "ValidationException"
	case 403:
		return "AccessDeniedException"
	case 404:
		return "ResourceNotFoundException"
	case 429:
		return "ThrottlingException"
	case 503, 529:
		return "ServiceUnavailableException"
	}
	if status >= 500 {
		return "InternalServerException"
	}
	return "ValidationException"
}
