package fakeapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// azurePost sends body to path with the key in api-key.
func azurePost(t *testing.T, s *fakeapi.Server, path, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Api-Key", key)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// The fakes answer at Azure OpenAI's paths as it does: the version where
// it is needed, the key in api-key, the content filter's verdicts in chat
// answers and streams (the first chunk without choices); the OpenAI
// paths stay OpenAI's.
func TestAzureRoutesAndAnswers(t *testing.T) {
	brain := fakeapi.Script{"Look up order A-991.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{Text: "It is a gold order."},
	}}
	chat := fakeapi.NewOpenAIChat(brain, fakeapi.RequireKey("azure-key"))
	defer chat.Close()
	responses := fakeapi.NewOpenAIResponses(brain, fakeapi.RequireKey("azure-key"))
	defer responses.Close()
	const ask = `{"model":"dep-1","messages":[{"role":"user","content":"Look up order A-991."}],"tools":[{"type":"function","function":{"name":"lookup_order","parameters":{"type":"object"}}}]}`
	const answered = `{"model":"dep-1","messages":[{"role":"user","content":"Look up order A-991."},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup_order","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"gold"}],"tools":[{"type":"function","function":{"name":"lookup_order","parameters":{"type":"object"}}}]%s}`
	for _, c := range []struct {
		name, path, key, body string
		status                int
		has                   []string
	}{
		{"deployment", "/openai/deployments/dep-1/chat/completions?api-version=2024-10-21", "azure-key", ask, 200,
			[]string{`"prompt_filter_results":[{"content_filter_results":{"hate":`, `"content_filter_results":{}`, `"lookup_order"`}},
		{"v1", "/openai/v1/chat/completions", "azure-key", strings.Replace(answered, "%s", "", 1), 200,
			[]string{`"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}`, `"It is a gold order."`}},
		{"stream", "/openai/deployments/dep-1/chat/completions?api-version=2024-10-21", "azure-key", strings.Replace(answered, "%s", `,"stream":true`, 1), 200,
			[]string{`data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":`, `"delta":{"content":"It is a gold"}`, "data: [DONE]"}},
		{"no version", "/openai/deployments/dep-1/chat/completions", "azure-key", ask, 404, []string{"Resource not found"}},
		{"wrong key", "/openai/v1/chat/completions", "other", ask, 401, []string{"Access denied"}},
		{"no deployment", "/openai/deployments//chat/completions?api-version=2024-10-21", "azure-key", ask, 404, []string{"Invalid URL"}},
		{"chat at the resource", "/openai/chat/completions?api-version=2024-10-21", "azure-key", ask, 404, []string{"Invalid URL"}},
	} {
		status, body := azurePost(t, chat, c.path, c.key, c.body)
		if status != c.status {
			t.Errorf("%s: %d %s", c.name, status, body)
		}
		for _, h := range c.has {
			if !strings.Contains(body, h) {
				t.Errorf("%s: no %s in\n%s", c.name, h, body)
			}
		}
		if status == 200 && strings.Contains(body, "service_tier") {
			t.Errorf("%s: Azure sends no service_tier:\n%s", c.name, body)
		}
	}
	const rask = `{"model":"dep-1","input":"Look up order A-991.","tools":[{"type":"function","name":"lookup_order","strict":false,"parameters":{"type":"object"}}]}`
	for path, want := range map[string]int{
		"/openai/responses?api-version=2025-04-01-preview":                   200,
		"/openai/deployments/dep-1/responses?api-version=2025-04-01-preview": 200,
		"/openai/v1/responses": 200,
		"/openai/responses":    404,
	} {
		status, body := azurePost(t, responses, path, "azure-key", rask)
		if status != want || want == 200 && !strings.Contains(body, `"function_call"`) {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
	// The OpenAI API's own paths are unchanged: no content filter.
	if status, body := oaiPost(t, chat, "/v1/chat/completions", "azure-key", ask); status != 200 || strings.Contains(body, "filter") {
		t.Errorf("openai path: %d %s", status, body)
	}
}
