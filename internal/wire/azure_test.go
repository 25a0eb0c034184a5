package wire

import (
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/provider"
)

// Azure OpenAI's URLs: the deployment's path for chat, the resource's for
// Responses, the v1 API's without a version; an endpoint's own path and
// query stay; a deployment that is not a path segment is refused.
func TestAzureURLs(t *testing.T) {
	for _, c := range []struct {
		base, version, api, deployment, want string
	}{
		{"https://r.openai.azure.com", "2024-10-21", "chat/completions", "gpt-4o",
			"https://r.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"},
		{"https://r.openai.azure.com/", "", "chat/completions", "my_dep.1",
			"https://r.openai.azure.com/openai/deployments/my_dep.1/chat/completions?api-version=2024-10-21"},
		{"https://r.openai.azure.com", "2025-04-01-preview", "responses", "gpt-4o",
			"https://r.openai.azure.com/openai/responses?api-version=2025-04-01-preview"},
		{"https://r.openai.azure.com", "v1", "chat/completions", "gpt-4o", "https://r.openai.azure.com/openai/v1/chat/completions"},
		{"https://r.openai.azure.com", "v1", "responses", "gpt-4o", "https://r.openai.azure.com/openai/v1/responses"},
		{"https://apim.azure-api.net/team?subscription=s", "2024-10-21", "chat/completions", "d",
			"https://apim.azure-api.net/team/openai/deployments/d/chat/completions?api-version=2024-10-21&subscription=s"},
		{"", "2024-10-21", "chat/completions", "d", "https://azure-openai.invalid/openai/deployments/d/chat/completions?api-version=2024-10-21"},
	} {
		got, err := azureURL(c.base, c.version, c.api, c.deployment)
		if err != nil || got != c.want {
			t.Errorf("azureURL(%q, %q, %q, %q) = %q, %v; want %q", c.base, c.version, c.api, c.deployment, got, err, c.want)
		}
	}
	for deployment, want := range map[string]string{
		"a/../b": "it holds '/'", "": "it is empty", "-x": "starts with '-'", "é": "starts with 'é'",
		"a?b": "it holds '?'", strings.Repeat("a", 65): "65 bytes long, over Azure's 64",
	} {
		_, err := azureURL("https://r.openai.azure.com", "", "chat/completions", deployment)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("deployment %q: %v, want %q", deployment, err, want)
		}
	}
	if _, err := azureURL("r.openai.azure.com", "", "responses", "d"); err == nil || !strings.Contains(err.Error(), "not an absolute URL") {
		t.Errorf("an endpoint without a scheme: %v", err)
	}
	if _, err := New(Options{Provider: provider.AzureOpenAI, Model: "a b"}); err == nil || !strings.Contains(err.Error(), `the Azure OpenAI deployment "a b" (agent.model) cannot be used: it holds ' '`) {
		t.Errorf("New with a bad deployment: %v", err)
	}
	for v, ok := range map[string]bool{"v1": true, "2024-10-21": true, "2025-04-01-preview": true, "2024-1-21": false, "latest": false, "2024-10-21-beta": false, "2024-10-21-preview-preview": false, "2024-13-01": false, "2024-12-00": false} {
		if got := provider.APIVersionProblem(v) == ""; got != ok {
			t.Errorf("APIVersionProblem(%q) accepts = %v, want %v", v, got, ok)
		}
	}
}

// Azure's credentials: the key in AZURE_OPENAI_API_KEY, the endpoint of
// the suite or AZURE_OPENAI_ENDPOINT; calls cannot go live without the
// endpoint, nor to an Azure host without the key.
func TestAzureCredentials(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		base        string
		env         func(string) string
		public      bool
		unavailable string
	}{
		{"", env(), true, "AZURE_OPENAI_ENDPOINT is not set (nor agent.base_url)"},
		{"", env("AZURE_OPENAI_API_KEY", "k"), true, "AZURE_OPENAI_ENDPOINT is not set (nor agent.base_url)"},
		{"", env("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com"), true, "AZURE_OPENAI_API_KEY is not set"},
		{"https://r.cognitiveservices.azure.com", env("AZURE_OPENAI_API_KEY", "k"), true, ""},
		{"http://127.0.0.1:8080", env(), false, "AZURE_OPENAI_API_KEY is not set"},
	} {
		cred := Resolve(provider.AzureOpenAIResponses, c.base, c.env)
		if cred.Public != c.public || cred.LiveUnavailable(provider.AzureOpenAIResponses) != c.unavailable || cred.KeyEnv != "AZURE_OPENAI_API_KEY" {
			t.Errorf("%q: %+v, unavailable %q; want public %v, %q", c.base, cred, cred.LiveUnavailable(provider.AzureOpenAIResponses), c.public, c.unavailable)
		}
	}
}
