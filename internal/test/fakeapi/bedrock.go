package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

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
		if _, _, ok := wire.BedrockPath(r.URL.EscapedPath()); r.Method != http.MethodPost || !ok {
			return &fault{status: http.StatusNotFound, typ: "UnknownOperationException", msg: "Not Found"}
		}
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "Bearer ") && (!strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=") || r.Header.Get("X-Amz-Date") == "") ||
			cfg.key != "" && !strings.Contains(auth, cfg.key) {
			return &fault{status: http.StatusForbidden, typ: "UnrecognizedClientException", msg: "The security token included in the request is invalid."}
		}
		return nil
	}, answer: func(w http.ResponseWriter, r *http.Request, data []byte) (*wire.Reply, *fault) {
		modelID, stream, _ := wire.BedrockPath(r.URL.EscapedPath())
		if msg := checkBedrock(data); msg != "" {
			return nil, &fault{typ: "ValidationException", msg: msg}
		}
		turn, err := brain.Next(conversation(wire.Bedrock, r, data))
		if err != nil {
			return nil, &fault{status: http.StatusInternalServerError, typ: "InternalServerException", msg: "fake model: " + err.Error()}
		}
		rep := reply(data, modelID, turn)
		for i := range rep.Calls {
			rep.Calls[i].ID = "tooluse_" + digest(data, fmt.Sprint("tooluse", i))[:22]
		}
		rep.Stream = stream
		w.Header().Set("X-Amzn-Requestid", digest(data, "request")[:36])
		return rep, nil
	}}, cfg)
}

// checkBedrock checks a Converse request as Bedrock does: the message
// is why it is refused ("": it is not).
func checkBedrock(data []byte) string {
	var req struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		ToolConfig *struct {
			Tools []struct {
				ToolSpec struct{ Name string } `json:"toolSpec"`
			} `json:"tools"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return "Malformed input request: " + err.Error()
	}
	if len(req.Messages) == 0 {
		return "A conversation must start with a user message. Try again with a conversation that starts with a user message."
	}
	var open []string // the toolUseIds of the assistant message before
	for i, m := range req.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			return fmt.Sprintf("A conversation must alternate between user and assistant roles: messages.%d has role %q.", i, m.Role)
		}
		var uses []string
		answered := map[string]bool{}
		for k, b := range m.Content {
			switch {
			case b["text"] != nil:
			case b["toolUse"] != nil && m.Role == "assistant":
				u, _ := b["toolUse"].(map[string]any)
				id, _ := u["toolUseId"].(string)
				name, _ := u["name"].(string)
				if _, ok := u["input"].(map[string]any); id == "" || name == "" || !ok {
					return fmt.Sprintf("messages.%d.content.%d.toolUse needs a toolUseId, a name and an input that is an object.", i, k)
				}
				uses = append(uses, id)
			case b["toolResult"] != nil && m.Role == "user":
				r, _ := b["toolResult"].(map[string]any)
				id, _ := r["toolUseId"].(string)
				if !slices.Contains(open, id) {
					return fmt.Sprintf("messages.%d.content.%d.toolResult: the toolUseId %q answers no toolUse of the previous turn.", i, k, id)
				}
				answered[id] = true
			default:
				return fmt.Sprintf("messages.%d.content.%d holds no block this role may send.", i, k)
			}
		}
		if m.Role == "user" && len(open) != len(answered) {
			return fmt.Sprintf("messages.%d: every toolUse of the previous turn needs its toolResult.", i)
		}
		open = uses
	}
	if req.ToolConfig != nil {
		for i, t := range req.ToolConfig.Tools {
			if t.ToolSpec.Name == "" {
				return fmt.Sprintf("toolConfig.tools.%d.toolSpec needs a name.", i)
			}
		}
	}
	return ""
}
