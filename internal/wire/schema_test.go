package wire_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// A tool whose input_schema has no "type" is sent with "type": "object"
// added, since every provider's API rejects a tool schema without it; the
// fakes reject it the same way, so the call would fail otherwise.
func TestToolSchemaWithoutTypeIsSentAsObject(t *testing.T) {
	script := fakeapi.Script{"hi": {{Text: "hello"}}}
	tests := []struct {
		provider string
		fake     func() *fakeapi.Server
		schemaAt func(body map[string]any) any
	}{
		{provider.Anthropic, func() *fakeapi.Server { return fakeapi.NewAnthropic(script) },
			func(b map[string]any) any { return b["tools"].([]any)[0].(map[string]any)["input_schema"] }},
		{provider.OpenAI, func() *fakeapi.Server { return fakeapi.NewOpenAIChat(script) },
			func(b map[string]any) any {
				return b["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)["parameters"]
			}},
		{provider.OpenAIResponses, func() *fakeapi.Server { return fakeapi.NewOpenAIResponses(script) },
			func(b map[string]any) any { return b["tools"].([]any)[0].(map[string]any)["parameters"] }},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			srv := tt.fake()
			defer srv.Close()
			base := srv.URL
			if tt.provider != provider.Anthropic {
				base += "/v1"
			}
			m, c, _ := oaiModel(t, tt.provider, base, "sk-test")
			schema := map[string]any{"properties": map[string]any{"order_id": map[string]any{"type": "string"}}}
			resp, err := m.Generate(context.Background(), &model.Request{Model: "m-test",
				Tools:    []model.ToolDef{{Name: "lookup_order", InputSchema: schema}},
				Messages: []model.Message{{Role: model.User, Text: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "hello" {
				t.Errorf("text %q", resp.Text)
			}
			var body map[string]any
			if err := json.Unmarshal(c.exchanges()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			got := tt.schemaAt(body).(map[string]any)
			if got["type"] != "object" || got["properties"] == nil {
				t.Errorf("schema sent: %v", got)
			}
			if _, ok := schema["type"]; ok {
				t.Errorf("the suite's schema was changed: %v", schema)
			}
		})
	}
}
