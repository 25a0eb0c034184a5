package wire

import "strconv"

// Wire shapes of a response object and its stream events, in the API's key order.
type (
	responseText struct {
		Type        string `json:"type"`
		Annotations []any  `json:"annotations"`
		Logprobs    []any  `json:"logprobs"`
		Text        string `json:"text"`
	}
	responseSummary struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	responseReasoning struct {
		ID               string            `json:"id"`
		Type             string            `json:"type"`
		Summary          []responseSummary `json:"summary"`
		EncryptedContent string            `json:"encrypted_content,omitempty"`
	}
	responseMessage struct {
		ID      string         `json:"id"`
		Type    string         `json:"type"`
		Status  string         `json:"status"`
		Content []responseText `json:"content"`
		Role    string         `json:"role"`
	}
	responseFunctionCall struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Status    string `json:"status"`
		Arguments string `json:"arguments"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"` // of a tool offered in a namespace
	}
	responseFunctionTool struct {
		Type        string `json:"type"`
		Description any    `json:"description"`
		Name        string `json:"name"`
		Parameters  any    `json:"parameters"`
		Strict      bool   `json:"strict"`
	}
	responseUsage struct { // also as read (parseResponses): details of any kind
		InputTokens         int            `json:"input_tokens"`
		InputTokensDetails  map[string]any `json:"input_tokens_details"`
		OutputTokens        int            `json:"output_tokens"`
		OutputTokensDetails map[string]any `json:"output_tokens_details"`
		TotalTokens         int            `json:"total_tokens"`
	}
	responseObject struct {
		ID                 string         `json:"id"`
		Object             string         `json:"object"`
		CreatedAt          int64          `json:"created_at"`
		Status             string         `json:"status"`
		Background         bool           `json:"background"`
		Error              any            `json:"error"`
		IncompleteDetails  any            `json:"incomplete_details"`
		Instructions       any            `json:"instructions"`
		Model              string         `json:"model"`
		Output             []any          `json:"output"`
		ParallelToolCalls  bool           `json:"parallel_tool_calls"`
		PreviousResponseID any            `json:"previous_response_id"`
		Store              bool           `json:"store"`
		Temperature        any            `json:"temperature"`
		ToolChoice         any            `json:"tool_choice"`
		Tools              []any          `json:"tools"`
		TopP               any            `json:"top_p"`
		Usage              *responseUsage `json:"usage"`
		Metadata           any            `json:"metadata"`
	}
)

// echoed is a request key as a response object shows it: its value, or
// the API's default when absent or null.
func echoed(req map[string]any, key string, def any) any {
	if v, ok := req[key]; ok && v != nil {
		return v
	}
	return def
}

// writeResponses writes r as a response object (the request's keys it
// repeats from r.Echo, with the API's defaults), or streamed: created,
// in_progress, each output item (added, its deltas, done), completed. A
// Thinking is a reasoning item, first.
func writeResponses(r *Reply) (body []byte, events [][]byte) {
	output := []any{}
	if r.Thinking != "" {
		output = append(output, responseReasoning{ID: "rs_" + r.ID, Type: "reasoning", Summary: []responseSummary{{"summary_text", r.Thinking}}, EncryptedContent: r.Signature})
	}
	if (r.Text != "" || len(r.Calls) == 0) && !r.NoOutput {
		output = append(output, responseMessage{ID: "msg_" + r.ID, Type: "message", Status: "completed", Role: "assistant",
			Content: []responseText{{Type: "output_text", Annotations: []any{}, Logprobs: []any{}, Text: r.Text}}})
	}
	for i, c := range r.Calls {
		space, name := splitNS(list(r.Echo["tools"]), c.Name)
		output = append(output, responseFunctionCall{ID: "fc_" + r.ID + "_" + strconv.Itoa(i+1), Type: "function_call", Status: "completed",
			Arguments: c.Args, CallID: c.ID, Name: name, Namespace: space})
	}
	tools := []any{}
	for _, t := range list(r.Echo["tools"]) {
		tm, _ := t.(map[string]any)
		if tm["type"] != "function" {
			tools = append(tools, t)
			continue
		}
		strict, ok := tm["strict"].(bool)
		if !ok {
			strict = true // the API's default
		}
		name, _ := tm["name"].(string)
		tools = append(tools, responseFunctionTool{Type: "function", Description: tm["description"], Name: name, Parameters: tm["parameters"], Strict: strict})
	}
	store, _ := echoed(r.Echo, "store", true).(bool)
	u := r.Usage
	o := responseObject{
		ID: "resp_" + r.ID, Object: "response", CreatedAt: r.Created, Status: "completed",
		Instructions: echoed(r.Echo, "instructions", nil), Model: r.Model, Output: output, ParallelToolCalls: true,
		PreviousResponseID: echoed(r.Echo, "previous_response_id", nil), Store: store,
		Temperature: echoed(r.Echo, "temperature", 1), ToolChoice: echoed(r.Echo, "tool_choice", "auto"),
		Tools: tools, TopP: echoed(r.Echo, "top_p", 1), Metadata: echoed(r.Echo, "metadata", map[string]any{}),
		Usage: &responseUsage{InputTokens: u.InputTokens, InputTokensDetails: map[string]any{"cache_write_tokens": 0, "cached_tokens": 0},
			OutputTokens: u.OutputTokens, OutputTokensDetails: map[string]any{"reasoning_tokens": r.ThinkingTokens}, TotalTokens: u.InputTokens + u.OutputTokens},
	}
	if !r.Stream {
		return marshal(o), nil
	}
	return nil, responsesStream(o)
}

// responsesStream streams a response: created, in_progress, each output
// item (added, its deltas, done), completed.
func responsesStream(r responseObject) [][]byte {
	var events [][]byte
	seq := 0
	emit := func(typ string, fields any) {
		events = append(events, Frame(typ, withType(typ, seq, fields)))
		seq++
	}
	item := func(typ string, i int, it any) { emit(typ, jsonObject{{"output_index", i}, {"item", it}}) }
	// at is an event of item id's part k at output index i.
	at := func(typ, id string, i int, part string, k int, rest ...jsonKV) {
		emit(typ, append(jsonObject{{"item_id", id}, {"output_index", i}, {part, k}}, rest...))
	}
	start := r
	start.Status, start.Output, start.Usage = "in_progress", []any{}, nil
	emit("response.created", jsonObject{{"response", start}})
	emit("response.in_progress", jsonObject{{"response", start}})
	for i, output := range r.Output {
		switch it := output.(type) {
		case responseReasoning:
			added := it
			added.Summary, added.EncryptedContent = []responseSummary{}, ""
			item("response.output_item.added", i, added)
			for k, sum := range it.Summary {
				at("response.reasoning_summary_part.added", it.ID, i, "summary_index", k, jsonKV{"part", responseSummary{Type: sum.Type}})
				for _, p := range pieces(sum.Text) {
					at("response.reasoning_summary_text.delta", it.ID, i, "summary_index", k, jsonKV{"delta", p})
				}
				at("response.reasoning_summary_text.done", it.ID, i, "summary_index", k, jsonKV{"text", sum.Text})
				at("response.reasoning_summary_part.done", it.ID, i, "summary_index", k, jsonKV{"part", sum})
			}
			item("response.output_item.done", i, it)
		case responseMessage:
			added := it
			added.Status, added.Content = "in_progress", []responseText{}
			item("response.output_item.added", i, added)
			for k, part := range it.Content {
				empty := part
				empty.Text = ""
				at("response.content_part.added", it.ID, i, "content_index", k, jsonKV{"part", empty})
				for _, p := range pieces(part.Text) {
					at("response.output_text.delta", it.ID, i, "content_index", k, jsonKV{"delta", p}, jsonKV{"logprobs", []any{}})
				}
				at("response.output_text.done", it.ID, i, "content_index", k, jsonKV{"text", part.Text}, jsonKV{"logprobs", []any{}})
				at("response.content_part.done", it.ID, i, "content_index", k, jsonKV{"part", part})
			}
			item("response.output_item.done", i, it)
		case responseFunctionCall:
			added := it
			added.Status, added.Arguments = "in_progress", ""
			item("response.output_item.added", i, added)
			for _, p := range pieces(it.Arguments) {
				emit("response.function_call_arguments.delta", jsonObject{{"item_id", it.ID}, {"output_index", i}, {"delta", p}})
			}
			emit("response.function_call_arguments.done", jsonObject{{"item_id", it.ID}, {"name", it.Name}, {"output_index", i}, {"arguments", it.Arguments}})
			item("response.output_item.done", i, it)
		}
	}
	emit("response.completed", jsonObject{{"response", r}})
	return events
}
