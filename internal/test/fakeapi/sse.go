package fakeapi

import (
	"maps"
	"slices"
)

// streamFlag reads a request's "stream": absent or false is false.
func streamFlag(req map[string]any) (bool, *fault) {
	switch v := req["stream"].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, invalidType("stream", "a boolean", v)
	}
}

// streamOptions checks an OpenAI request's stream_options (allowed only
// with stream: true) and reads include_usage.
func streamOptions(req map[string]any, stream bool) (includeUsage bool, e *fault) {
	raw, ok := req["stream_options"]
	if !ok || raw == nil {
		return false, nil
	}
	if !stream {
		return false, &fault{param: "stream_options", code: "invalid_value", msg: "The 'stream_options' parameter is only allowed when 'stream' is enabled."}
	}
	opts, ok := raw.(map[string]any)
	if !ok {
		return false, invalidType("stream_options", "an object", raw)
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		switch k {
		case "include_usage", "include_obfuscation":
			if _, ok := opts[k].(bool); !ok {
				return false, invalidType("stream_options."+k, "a boolean", opts[k])
			}
		default:
			return false, &fault{param: "stream_options." + k, code: "unknown_parameter", msg: "Unknown parameter: 'stream_options." + k + "'."}
		}
	}
	u, _ := opts["include_usage"].(bool)
	return u, nil
}
