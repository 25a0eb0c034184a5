package wire

import "testing"

// A base URL's query (an api-version, say) stays at the end of the
// endpoint's URL; the path is joined before it.
func TestEndpointURLs(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"openai default", endpoint("", "chat/completions"), "https://api.openai.com/v1/chat/completions"},
		{"openai slash", endpoint("http://h/v1/", "responses"), "http://h/v1/responses"},
		{"openai query", endpoint("https://x.azure.com/openai/deployments/d?api-version=2024-02-01", "chat/completions"),
			"https://x.azure.com/openai/deployments/d/chat/completions?api-version=2024-02-01"},
		{"openai slash and query", endpoint("http://h/v1/?a=1&b=%2F", "chat/completions"), "http://h/v1/chat/completions?a=1&b=%2F"},
		{"openai fragment", endpoint("http://h/v1#x", "responses"), "http://h/v1/responses#x"},
		{"anthropic default", anthropicURL(""), "https://api.anthropic.com/v1/messages"},
		{"anthropic v1", anthropicURL("http://h/v1/"), "http://h/v1/messages"},
		{"anthropic full", anthropicURL("http://h/v1/messages"), "http://h/v1/messages"},
		{"anthropic query", anthropicURL("http://h/proxy?key=k"), "http://h/proxy/v1/messages?key=k"},
		{"anthropic v1 query", anthropicURL("http://h/v1?key=k"), "http://h/v1/messages?key=k"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}
