package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	dmodel "github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// NewBedrock serves Amazon Bedrock's Converse API (POST
// /model/MODEL/converse, and /converse-stream as the AWS event stream)
// from brain. It wants a request signed with Signature Version 4 (an
// Authorization header of AWS4-HMAC-SHA256 with X-Amz-Date) or a Bedrock
// API key (Authorization: Bearer), and refuses, with {"message"} and
// x-amzn-ErrorType ValidationException, messages that are missing, whose
// roles do not alternate from the user's, whose blocks hold nothing
// known, a toolUse input that is not an object, a toolResult that answers
// no toolUse of the assistant message before it, and tools without a
// name. Tool uses carry ids hashed from the request.
func NewBedrock(brain Brain, opts ...Option) *Server {
	cfg := configure(opts)
	return start(&handler{api: wire.Bedrock, check: func(r *http.Request) *fault {
		_, method, err := bedrockRoute(r)
		if r.Method != http.MethodPost || err != nil || method != "converse" && method != "converse-stream" {
			return &fault{status: http.StatusNotFound, typ: "UnknownOperationException", msg: "Not Found"}
		}
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "Bearer ") && (!strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=") || r.Header.Get("X-Amz-Date") == "") ||
			cfg.key != "" && !strings.Contains(auth, cfg.key) {
			return &fault{status: http.StatusForbidden, typ: "UnrecognizedClientException", msg: "The security token included in the request is invalid."}
		}
		return nil
	}, answer: func(w http.ResponseWriter, r *http.Request, data []byte) (*wire.Reply, *fault) {
		modelID, method, _ := bedrockRoute(r)
		conv, msg := bedrockConversation(data)
		if msg != "" {
			return nil, &fault{typ: "ValidationException", msg: msg}
		}
		conv.Model = modelID
		turn, err := brain.Next(conv)
		if err != nil {
			return nil, &fault{status: http.StatusInternalServerError, typ: "InternalServerException", msg: "fake model: " + err.Error()}
		}
		rep := reply(data, modelID, turn)
		for i := range rep.Calls {
			rep.Calls[i].ID = "tooluse_" + digest(data, fmt.Sprint("tooluse", i))[:22]
		}
		rep.Stream = method == "converse-stream"
		w.Header().Set("X-Amzn-Requestid", digest(data, "request")[:36])
		return rep, nil
	}}, cfg)
}

// bedrockRoute reads /model/MODEL/METHOD.
func bedrockRoute(r *http.Request) (modelID, method string, err error) {
	rest, _ := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	id, method, _ := strings.Cut(rest, "/")
	modelID, err = url.PathUnescape(id)
	return modelID, method, err
}

// bedrockConversation checks a Converse request as Bedrock does and reads
// it; the message is why it is refused ("": it is not).
func bedrockConversation(data []byte) (Conversation, string) {
	var c Conversation
	var req struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		System     []struct{ Text string } `json:"system"`
		ToolConfig *struct {
			Tools []struct {
				ToolSpec struct{ Name string } `json:"toolSpec"`
			} `json:"tools"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return c, "Malformed input request: " + err.Error()
	}
	if len(req.Messages) == 0 {
		return c, "A conversation must start with a user message. Try again with a conversation that starts with a user message."
	}
	for _, s := range req.System {
		c.System += s.Text
	}
	open := map[string]string{} // toolUseId → name, of the assistant message before
	for i, m := range req.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			return c, fmt.Sprintf("A conversation must alternate between user and assistant roles: messages.%d has role %q.", i, m.Role)
		}
		var texts []string
		a := Msg{Role: dmodel.Role(m.Role)}
		answered := map[string]string{}
		for k, b := range m.Content {
			switch {
			case b["text"] != nil:
				t, _ := b["text"].(string)
				texts = append(texts, t)
			case b["toolUse"] != nil && m.Role == "assistant":
				u, _ := b["toolUse"].(map[string]any)
				id, _ := u["toolUseId"].(string)
				name, _ := u["name"].(string)
				input, ok := u["input"].(map[string]any)
				if id == "" || name == "" || !ok {
					return c, fmt.Sprintf("messages.%d.content.%d.toolUse needs a toolUseId, a name and an input that is an object.", i, k)
				}
				args, _ := wire.Marshal(input)
				a.ToolCalls = append(a.ToolCalls, ToolCall{ID: id, Name: name, Args: string(args)})
			case b["toolResult"] != nil && m.Role == "user":
				r, _ := b["toolResult"].(map[string]any)
				id, _ := r["toolUseId"].(string)
				if _, ok := open[id]; !ok {
					return c, fmt.Sprintf("messages.%d.content.%d.toolResult: the toolUseId %q answers no toolUse of the previous turn.", i, k, id)
				}
				answered[id] = open[id]
				text, _ := wire.Marshal(r["content"])
				c.Messages = append(c.Messages, Msg{Role: "tool", CallID: id, Text: string(text), IsError: r["status"] == "error"})
			default:
				return c, fmt.Sprintf("messages.%d.content.%d holds no block this role may send.", i, k)
			}
		}
		if m.Role == "user" && len(open) != len(answered) {
			return c, fmt.Sprintf("messages.%d: every toolUse of the previous turn needs its toolResult.", i)
		}
		open = map[string]string{}
		if m.Role == "assistant" {
			a.Text = strings.Join(texts, "\n")
			for _, tc := range a.ToolCalls {
				open[tc.ID] = tc.Name
			}
			c.Messages = append(c.Messages, a)
		} else if len(texts) > 0 {
			c.Messages = append(c.Messages, Msg{Role: "user", Text: strings.Join(texts, "\n")})
		}
	}
	if req.ToolConfig != nil {
		for i, t := range req.ToolConfig.Tools {
			if t.ToolSpec.Name == "" {
				return c, fmt.Sprintf("toolConfig.tools.%d.toolSpec needs a name.", i)
			}
			c.Tools = append(c.Tools, t.ToolSpec.Name)
		}
	}
	return c, ""
}
