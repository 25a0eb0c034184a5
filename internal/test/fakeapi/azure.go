package fakeapi

import (
	"bytes"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Azure OpenAI serves the OpenAI APIs at its own paths, the key in api-key:
//
//   - a deployment's /openai/deployments/D/chat/completions and
//     /openai/deployments/D/responses, and the resource's
//     /openai/responses, each with ?api-version=;
//   - the v1 API's /openai/v1/chat/completions and /openai/v1/responses,
//     which need no api-version.
//
// Its chat answers carry its content filter's verdicts, which the OpenAI
// API does not send: prompt_filter_results on the completion (in a first
// stream chunk of its own, with no choices and empty id, model and
// object), content_filter_results on each choice (every category "safe"
// for text; {} for a chunk without text), and no service_tier. Its JSON
// has its keys in alphabetical order. The Responses API's answers are
// OpenAI's.

// azureRoute says whether path is an Azure OpenAI form of the OpenAI route
// own (/v1/chat/completions or /v1/responses: wire.RouteOf reads both; a
// chat completion only at a deployment's or the v1 API's path), and
// whether it needs an api-version.
func azureRoute(path, own string) (azure, versioned bool) {
	api, ok := wire.RouteOf(path)
	rest, isAzure := strings.CutPrefix(path, "/openai/")
	v1 := strings.HasPrefix(rest, "v1/")
	return isAzure && ok && api == wire.Routes[own] && (api != wire.OpenAIChat || v1 || strings.HasPrefix(rest, "deployments/")), !v1
}

// azureSafe is the content filter's verdict on harmless text, per category.
func azureSafe() map[string]any {
	safe := map[string]any{"filtered": false, "severity": "safe"}
	return map[string]any{"hate": safe, "self_harm": safe, "sexual": safe, "violence": safe}
}

// azurePromptFilter is prompt_filter_results: the verdict on the prompt.
func azurePromptFilter() []any {
	results := azureSafe()
	results["jailbreak"] = map[string]any{"filtered": false, "detected": false}
	return []any{map[string]any{"prompt_index": 0, "content_filter_results": results}}
}

// azureChat is a chat answer as Azure OpenAI writes it: a completion, or
// a stream that starts with the prompt's verdict.
func azureChat(data []byte, events [][]byte) ([]byte, [][]byte) {
	if events == nil {
		m := decodeObject(data)
		m["prompt_filter_results"] = azurePromptFilter()
		return azureChoices(m, "message"), nil
	}
	for i, ev := range events {
		data, _ := bytes.CutPrefix(bytes.TrimSuffix(ev, []byte("\n\n")), []byte("data: "))
		if m := decodeObject(data); m != nil { // not [DONE]
			events[i] = wire.Frame("", azureChoices(m, "delta"))
		}
	}
	return nil, append([][]byte{wire.Frame("", azurePromptChunk())}, events...)
}

// azurePromptChunk is the first chunk of an Azure OpenAI chat stream.
func azurePromptChunk() []byte {
	out, _ := wire.Marshal(map[string]any{"choices": []any{}, "created": 0, "id": "", "model": "", "object": "",
		"prompt_filter_results": azurePromptFilter()})
	return out
}

// azureChoices is a completion or chunk m as Azure OpenAI writes it: its
// keys in order, no service_tier, each choice's filter verdicts (on the
// text of its message or delta, key).
func azureChoices(m map[string]any, key string) []byte {
	delete(m, "service_tier")
	choices, _ := m["choices"].([]any)
	for _, ch := range choices {
		c := ch.(map[string]any)
		filter := map[string]any{}
		if m, _ := c[key].(map[string]any); m["content"] != nil && m["content"] != "" {
			filter = azureSafe()
		}
		c["content_filter_results"] = filter
	}
	out, _ := wire.Marshal(m)
	return out
}
