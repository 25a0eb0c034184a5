package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// responsesCall speaks the OpenAI Responses API.
//
// Wire decisions (the user-facing ones belong in docs/cassettes.md too):
//
//   - instructions is the system prompt; input is the whole conversation on
//     every call (no previous_response_id: each request stands alone, so a
//     cassette replays it without server state).
//   - The user message is {"type":"message","role":"user","content":
//     [{"type":"input_text","text":...}]}: the typed form the official SDKs
//     and the AI SDK send. The "type" key is optional for OpenAI but
//     required by strict implementations (Azure AI Foundry), so it is sent.
//   - An earlier assistant turn goes back as the output items the API
//     returned (Message.Raw), verbatim, as the API docs recommend: reasoning
//     and message items survive. Without Raw it is rebuilt as an assistant
//     message and function_call items.
//   - store is false unless agent.params sets it: nothing is kept on
//     OpenAI's side, and no call depends on an earlier one. With store false
//     the API cannot look up a reasoning item by id, so a reasoning item
//     without encrypted_content is left out of the next input (the API's
//     own advice: "remove this item from your input"). To keep reasoning
//     across turns, set params include: ["reasoning.encrypted_content"]
//     (reasoning models only) or store: true.
//   - Function tools are flat and sent with "strict": false: the API's
//     default is strict, which refuses any schema that does not list every
//     property as required and forbid additional ones.
//   - A tool error goes back as the function_call_output text, prefixed
//     "Error: " as for Chat Completions (the API has no error flag).
//   - params are sent as is after the loop's keys; the loop's own keys
//     (model, input, instructions, tools, previous_response_id,
//     conversation) are refused before any call; stream: true streams (see
//     stream.go).
//
// It writes a call to url with header.
func responsesCall(to string, header http.Header) func(*model.Request) (*post, error) {
	return func(req *model.Request) (*post, error) {
		body, err := responsesBody(req)
		return &post{to, header, body, func(d []byte) (*model.Response, error) {
			return parseResponses(d, assistantTurns(req.Messages)+1)
		}}, err
	}
}

// responsesBody is the request body of one call, keys in a fixed order.
func responsesBody(req *model.Request) ([]byte, error) {
	store := false
	if s, ok := req.Params["store"].(bool); ok {
		store = s
	}
	input := make([]any, 0, len(req.Messages))
	for _, m := range req.Messages {
		switch m.Role {
		case model.User:
			input = append(input, jsonObject{{"type", "message"}, {"role", "user"},
				{"content", []any{jsonObject{{"type", "input_text"}, {"text", m.Text}}}}})
		case model.Assistant:
			items, err := assistantItems(m, store)
			if err != nil {
				return nil, err
			}
			input = append(input, items...)
		case model.ToolRole:
			input = append(input, jsonObject{{"type", "function_call_output"}, {"call_id", m.CallID}, {"output", toolResultText(m)}})
		default:
			return nil, fmt.Errorf("openai-responses: a message with role %q cannot be sent", m.Role)
		}
	}
	body := jsonObject{{"model", req.Model}}
	if req.System != "" {
		body = append(body, jsonKV{"instructions", req.System})
	}
	body = append(body, jsonKV{"input", input})
	if len(req.Tools) > 0 {
		tools := make([]any, len(req.Tools))
		for i, t := range req.Tools {
			tl := jsonObject{{"type", "function"}, {"name", t.Name}}
			if t.Description != "" {
				tl = append(tl, jsonKV{"description", t.Description})
			}
			tools[i] = append(tl, jsonKV{"parameters", schemaOf(t)}, jsonKV{"strict", false})
		}
		body = append(body, jsonKV{"tools", tools})
	}
	body = append(body, jsonKV{"store", store})
	body = appendParams(body, req.Params, []string{"store"})
	return body.MarshalJSON()
}

// assistantItems are the input items of an earlier assistant turn.
func assistantItems(m model.Message, store bool) ([]any, error) {
	if len(m.Raw) > 0 {
		var items []json.RawMessage
		if err := json.Unmarshal(m.Raw, &items); err != nil {
			return nil, fmt.Errorf("openai-responses: an earlier turn's output items are not a JSON array: %v", err)
		}
		out := make([]any, 0, len(items))
		for _, it := range items {
			if !store && unresolvableReasoning(it) {
				continue
			}
			out = append(out, it)
		}
		return out, nil
	}
	var out []any
	if m.Text != "" {
		out = append(out, jsonObject{{"type", "message"}, {"role", "assistant"}, {"content", m.Text}})
	}
	for _, c := range m.ToolCalls {
		out = append(out, jsonObject{{"type", "function_call"}, {"call_id", c.ID}, {"name", c.Name}, {"arguments", argsText(c.Args)}})
	}
	return out, nil
}

// unresolvableReasoning says whether an item is a reasoning item that only
// the server's storage could resolve: one without encrypted_content.
func unresolvableReasoning(item json.RawMessage) bool {
	var it struct {
		Type             string  `json:"type"`
		EncryptedContent *string `json:"encrypted_content"`
	}
	if json.Unmarshal(item, &it) != nil {
		return false
	}
	return it.Type == "reasoning" && (it.EncryptedContent == nil || *it.EncryptedContent == "")
}

// responsesResponse is the part of a response object dryfire reads: not
// responseObject, since compatible servers send what dryfire does not
// read in other types, and the output items go back as they came (Raw).
type responsesResponse struct {
	Status            string          `json:"status"`
	Output            json.RawMessage `json:"output"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *responseUsage `json:"usage"`
}

type outputItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

// parseResponses reads a response object; turn numbers generated call ids.
func parseResponses(data []byte, turn int) (*model.Response, error) {
	var rr responsesResponse
	if err := json.Unmarshal(data, &rr); err != nil {
		return nil, fmt.Errorf("openai-responses: the answer is not a response object (%v): %s", err, excerpt(data))
	}
	switch rr.Status {
	case "completed", "":
	case "incomplete":
		reason := "not given"
		if rr.IncompleteDetails != nil && rr.IncompleteDetails.Reason != "" {
			reason = rr.IncompleteDetails.Reason
		}
		hint := ""
		if reason == "max_output_tokens" {
			hint = "; raise max_output_tokens in agent.params"
		}
		return nil, fmt.Errorf("openai-responses: the response is incomplete (incomplete_details.reason: %s)%s", reason, hint)
	case "failed":
		return nil, fmt.Errorf("openai-responses: the response failed: %s", responseError(rr.Error))
	case "queued", "in_progress":
		return nil, fmt.Errorf("openai-responses: the response is %s, not completed; dryfire's loop needs the whole answer (remove background from agent.params)", rr.Status)
	default:
		return nil, fmt.Errorf("openai-responses: the response has status %q, not completed: %s", rr.Status, responseError(rr.Error))
	}
	if len(rr.Output) == 0 || string(rr.Output) == "null" {
		return nil, fmt.Errorf("openai-responses: the answer is not a response object (it has no output; does the server speak the Responses API?): %s", excerpt(data))
	}
	var items []outputItem
	if err := json.Unmarshal(rr.Output, &items); err != nil {
		return nil, fmt.Errorf("openai-responses: the answer's output is not a list of items (%v): %s", err, excerpt(rr.Output))
	}
	r := &model.Response{Raw: rr.Output}
	var texts []string
	seen := map[string]bool{}
	rebuilt := false
	for _, it := range items {
		switch it.Type {
		case "message":
			var b strings.Builder
			for _, p := range it.Content {
				switch p.Type {
				case "output_text":
					b.WriteString(p.Text)
				case "refusal":
					b.WriteString(p.Refusal)
					r.Notes = append(r.Notes, "openai-responses refused to answer (refusal): "+excerptString(p.Refusal))
				}
			}
			if b.Len() > 0 {
				texts = append(texts, b.String())
			}
		case "function_call":
			id := it.CallID
			if id == "" {
				id = it.ID
			}
			if id == "" || seen[id] {
				id = fmt.Sprintf("call_%d_%d", turn, len(r.ToolCalls)+1)
			}
			seen[id] = true
			rebuilt = rebuilt || id != it.CallID
			r.ToolCalls = append(r.ToolCalls, tool.Call{ID: id, Name: it.Name, Args: rawArgs(it.Arguments)})
		}
	}
	r.Text = strings.Join(texts, "\n")
	if rebuilt {
		// A call needed an id of dryfire's: the items as received would
		// not match the results, so the turn goes back rebuilt.
		r.Raw = nil
	}
	if rr.Usage != nil {
		r.Usage = model.Usage{InputTokens: rr.Usage.InputTokens, OutputTokens: rr.Usage.OutputTokens}
	}
	return r, nil
}

// responseError is the text of a response's error object.
func responseError(raw json.RawMessage) string {
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &e) != nil || (e.Code == "" && e.Message == "") {
		return "no error given"
	}
	return joinNonEmpty(": ", e.Code, e.Message)
}
