package wire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The body the loop sends, and how the answer is read: a call without an
// id gets call_TURN_N (never sent back), one with an id keeps it; tool
// results are one user content of functionResponse parts; params go into
// generationConfig unless they are request fields.
func TestGeminiWire(t *testing.T) {
	var gotPath, gotKey, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotPath, gotKey, gotBody = r.URL.Path, r.Header.Get("X-Goog-Api-Key"), string(b)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"Refunding."},{"functionCall":{"name":"issue_refund","args":{"order_id":"A-991"}}},{"functionCall":{"id":"fc-9","name":"notify","args":{}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":9,"thoughtsTokenCount":3,"totalTokenCount":52},"modelVersion":"gemini-test"}`))
	}))
	defer srv.Close()
	m, err := New(Options{Provider: "gemini", Model: "gemini-test", BaseURL: srv.URL, APIKey: "AIza-test-key", Client: srv.Client(),
		Params: map[string]any{"temperature": 0, "toolConfig": map[string]any{"functionCallingConfig": map[string]any{"mode": "AUTO"}}}})
	if err != nil {
		t.Fatal(err)
	}
	req := &model.Request{System: "Be brief.", Tools: []model.ToolDef{{Name: "issue_refund", Description: "Refund.", InputSchema: map[string]any{"properties": map[string]any{}}}, {Name: "notify"}},
		Messages: []model.Message{
			{Role: model.User, Text: "Refund A-991."},
			{Role: model.Assistant, ToolCalls: []tool.Call{{ID: "call_1_1", Name: "lookup_order", Args: `{"order_id": "A-991"}`}, {ID: "fc-1", Name: "notify", Args: ""}}},
			{Role: model.ToolRole, CallID: "call_1_1", Text: `{"tier":"gold"}`},
			{Role: model.ToolRole, CallID: "fc-1", Text: "mailbox full", IsError: true},
		}}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contents":[{"role":"user","parts":[{"text":"Refund A-991."}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"lookup_order","args":{"order_id":"A-991"}}},{"functionCall":{"id":"fc-1","name":"notify","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"lookup_order","response":{"result":"{\"tier\":\"gold\"}"}}},{"functionResponse":{"id":"fc-1","name":"notify","response":{"error":"mailbox full"}}}]}],` +
		`"systemInstruction":{"parts":[{"text":"Be brief."}]},` +
		`"tools":[{"functionDeclarations":[{"name":"issue_refund","description":"Refund.","parametersJsonSchema":{"properties":{},"type":"object"}},{"name":"notify","parametersJsonSchema":{"type":"object"}}]}],` +
		`"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}},"generationConfig":{"temperature":0}}`
	if gotBody != want || gotPath != "/v1beta/models/gemini-test:generateContent" || gotKey != "AIza-test-key" {
		t.Errorf("sent %s %q\n%s\nwant\n%s", gotPath, gotKey, gotBody, want)
	}
	if resp.Text != "Refunding." || len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != (tool.Call{ID: "call_2_1", Name: "issue_refund", Args: `{"order_id":"A-991"}`}) ||
		resp.ToolCalls[1].ID != "fc-9" || resp.Usage != (model.Usage{InputTokens: 40, OutputTokens: 12}) || len(resp.Raw) == 0 {
		t.Errorf("read %+v", resp)
	}
	if _, err := m.Generate(context.Background(), &model.Request{Messages: req.Messages[:1], Params: map[string]any{"contents": []any{}}}); err == nil {
		t.Error("params.contents accepted")
	}
}

// TestGeminiStream: params.stream: true posts the same body to
// :streamGenerateContent?alt=sse; the chunks (text in pieces, a thought
// with its signature, a call, usage on the last) fold into the answer
// generateContent gives, adjacent text parts joined.
func TestGeminiStream(t *testing.T) {
	var gotURL, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotURL, gotBody = r.URL.String(), string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hm, \",\"thought\":true}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":40},\"responseId\":\"r1\"}\r\n\r\n" +
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"refund.\",\"thought\":true,\"thoughtSignature\":\"c2ln\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n" +
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Refunding \"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n" +
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"A-991 & co.\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n" +
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"issue_refund\",\"args\":{\"order_id\":\"A-991\"}}}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":40,\"candidatesTokenCount\":9,\"thoughtsTokenCount\":3},\"responseId\":\"r1\"}\r\n\r\n"))
	}))
	defer srv.Close()
	m, _ := New(Options{Provider: "gemini", Model: "gemini-test", BaseURL: srv.URL + "/v1beta?x=1", Client: srv.Client()})
	req := &model.Request{Messages: []model.Message{{Role: model.User, Text: "Refund A-991."}}, Params: map[string]any{"stream": true, "temperature": 0}}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if gotURL != "/v1beta/models/gemini-test:streamGenerateContent?x=1&alt=sse" || gotBody != `{"contents":[{"role":"user","parts":[{"text":"Refund A-991."}]}],"generationConfig":{"temperature":0}}` {
		t.Errorf("sent %s %s", gotURL, gotBody)
	}
	raw := `{"parts":[{"text":"Hm, refund.","thought":true,"thoughtSignature":"c2ln"},{"text":"Refunding A-991 & co."},{"functionCall":{"name":"issue_refund","args":{"order_id":"A-991"}}}],"role":"model"}`
	if resp.Text != "Refunding A-991 & co." || len(resp.ToolCalls) != 1 || resp.ToolCalls[0] != (tool.Call{ID: "call_1_1", Name: "issue_refund", Args: `{"order_id":"A-991"}`}) ||
		resp.Usage != (model.Usage{InputTokens: 40, OutputTokens: 12}) || string(resp.Raw) != raw {
		t.Errorf("read %+v\nraw %s\nwant %s", resp, resp.Raw, raw)
	}
}

func TestGeminiErrorsAndURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}`))
	}))
	defer srv.Close()
	m, _ := New(Options{Provider: "gemini", Model: "gemini-test", BaseURL: srv.URL, Client: srv.Client()})
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.User, Text: "hi"}}})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Type != "INVALID_ARGUMENT" || ae.Message != "API key not valid." {
		t.Errorf("error %v", err)
	}
	for base, want := range map[string]string{
		"https://g.example":          "https://g.example/v1beta/models/m-1:generateContent",
		"https://g.example/v1/":      "https://g.example/v1/models/m-1:generateContent",
		"https://g.example/p?x=1":    "https://g.example/p/v1beta/models/m-1:generateContent?x=1",
		"":                           DefaultGeminiBaseURL + "/v1beta/models/m-1:generateContent",
		"https://g.example/v1alpha":  "https://g.example/v1alpha/models/m-1:generateContent",
		"https://g.example/v1beta//": "https://g.example/v1beta/models/m-1:generateContent",
	} {
		if got := geminiURL(base, "m-1", "generateContent"); got != want {
			t.Errorf("geminiURL(%q) = %s, want %s", base, got, want)
		}
	}
}
