package wire_test

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// A provider's key comes from its variable; its base URL from the suite,
// else its variable, else the public endpoint, which alone is public.
func TestResolve(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY":     "sk-o",
		"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/",
	}
	getenv := func(k string) string { return env[k] }
	for _, tt := range []struct {
		provider, base string
		want           wire.Credentials
	}{
		{"openai", "", wire.Credentials{KeyEnv: "OPENAI_API_KEY", Key: "sk-o", BaseURL: wire.DefaultOpenAIBaseURL, Public: true}},
		{"openai-responses", wire.DefaultOpenAIBaseURL + "/", wire.Credentials{KeyEnv: "OPENAI_API_KEY", Key: "sk-o", BaseURL: wire.DefaultOpenAIBaseURL + "/", Public: true}},
		{"openai-compatible", "http://localhost:8080/v1", wire.Credentials{KeyEnv: "OPENAI_API_KEY", Key: "sk-o", BaseURL: "http://localhost:8080/v1"}},
		{"anthropic", "", wire.Credentials{KeyEnv: "ANTHROPIC_API_KEY", BaseURL: "http://127.0.0.1:9/"}},
		{"anthropic", "https://proxy.example/", wire.Credentials{KeyEnv: "ANTHROPIC_API_KEY", BaseURL: "https://proxy.example/"}},
	} {
		if got := wire.Resolve(tt.provider, tt.base, getenv); got != tt.want {
			t.Errorf("Resolve(%s, %q) = %+v, want %+v", tt.provider, tt.base, got, tt.want)
		}
	}
	if got := wire.Resolve("anthropic", "", func(string) string { return "" }); got.BaseURL != wire.DefaultAnthropicBaseURL || !got.Public {
		t.Errorf("anthropic with nothing set: %+v", got)
	}
}
