package verify

import (
	"slices"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

var fuzzAPIs = []wire.API{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini, wire.Ollama, wire.Bedrock}

// answer is an upstream's bytes as verify reads them: a body, or an
// event stream split as Send splits it.
func answer(status int, streamed bool, data []byte) *model.Answer {
	a := &model.Answer{Status: status, Streamed: streamed, Body: data}
	if streamed {
		a.Events, a.Body = cassette.SplitEvents(data), nil
	}
	return a
}

// What an upstream answers, and what a cassette recorded, are anyone's
// bytes: Compare reads any of them without a panic, the same way twice,
// and an answer compared with itself has not drifted.
func FuzzCompare(f *testing.F) {
	f.Add(uint8(0), false, false, []byte(`{"choices":[{"finish_reason":"tool_calls","message":{"tool_calls":[{"function":{"name":"a","arguments":"{\"x\":1}"}}]}}]}`), []byte(`{"choices":[{"finish_reason":"stop","message":{"content":"hi"}}]}`))
	f.Add(uint8(2), true, true, []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"stop_reason\":null}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), []byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"))
	f.Add(uint8(1), true, false, []byte("data: {\"type\":\"response.completed\"}\n\ndata: [DONE]\n\n"), []byte(`{"output":[{"type":"function_call","name":"f","arguments":"{}"}]}`))
	f.Add(uint8(3), false, false, []byte(`{"candidates":[{"finishReason":"STOP","content":{"parts":[{"functionCall":{"name":"f","args":{"a":[1,"x",null,{}]}}}]}}]}`), []byte(`[[[]],{"":{}}]`))
	f.Add(uint8(5), false, false, []byte(`{"stopReason":"tool_use","output":{"message":{"content":[{"toolUse":{"name":"f","input":{}}}]}}}`), []byte(`not json`))
	f.Fuzz(func(t *testing.T, api uint8, wasStreamed, nowStreamed bool, was, now []byte) {
		w := fuzzAPIs[int(api)%len(fuzzAPIs)]
		got := Compare(w, answer(200, wasStreamed, was), answer(200, nowStreamed, now))
		if again := Compare(w, answer(200, wasStreamed, was), answer(200, nowStreamed, now)); !slices.Equal(got, again) {
			t.Fatalf("twice, two answers:\n%q\n%q", got, again)
		}
		for _, side := range [][]byte{was, now} {
			if self := Compare(w, answer(200, wasStreamed, side), answer(200, wasStreamed, side)); len(self) > 0 {
				t.Fatalf("%q compared with itself drifted: %q", side, self)
			}
		}
	})
}

// A tool's answer from real tools: any text or content blocks, read the
// same way twice; an answer against itself has no difference.
func FuzzResultDiff(f *testing.F) {
	f.Add(`{"sum":5}`, []byte(nil), `{"total":"5"}`, []byte(nil), false)
	f.Add("Echo: hi", []byte(`[{"type":"text","text":"x"}]`), "5", []byte(`[{"type":"image","data":""}]`), true)
	f.Add(`"quoted"`, []byte(`[]`), `[1,{"a":null}]`, []byte(`{`), false)
	f.Fuzz(func(t *testing.T, wasText string, wasBlocks []byte, nowText string, nowBlocks []byte, isErr bool) {
		was := tool.Result{Content: wasText, Blocks: wasBlocks}
		now := tool.Result{Content: nowText, Blocks: nowBlocks, IsError: isErr}
		got := resultDiff(was, now)
		if again := resultDiff(was, now); !slices.Equal(got, again) {
			t.Fatalf("twice:\n%q\n%q", got, again)
		}
		for _, r := range []tool.Result{was, now} {
			if self := resultDiff(r, r); len(self) > 0 {
				t.Fatalf("%+v against itself: %q", r, self)
			}
		}
	})
}
