package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

const testKey = "sk-engine-test-0123456789"

var chatBody = map[string]any{"model": "gpt-4.1-mini", "messages": []any{map[string]any{"role": "user", "content": "Save record-1 with the text hello."}}}

// A drill's model endpoint records its calls into the drill's cassette
// (the key never written), and a later engine in mode none replays them
// with no upstream at all; a request that strays from the recording fails
// the drill, saying how.
func TestModelCallsRecordThenReplay(t *testing.T) {
	dir := project(t)
	srv := fakeapi.NewOpenAIChat(fakeapi.Script{"Save record-1 with the text hello.": {{Text: "Saved."}}}, fakeapi.RequireKey(testKey))
	p := startEngineEnv(t, dir, []string{"OPENAI_API_KEY=" + testKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"})
	d := p.start(map[string]any{"drill": "save-record"})
	status, ans := p.call("POST", d.binding["env"].(map[string]any)["OPENAI_BASE_URL"].(string)+"/chat/completions", chatBody, false)
	if status != 200 {
		t.Fatalf("chat completion through the drill: %d %v", status, ans)
	}
	text := ans["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
	if text != "Saved." {
		t.Errorf("answer %v", text)
	}
	d.op("record-store/records.save", map[string]any{"id": "record-1", "text": "hello"}, "")
	res := d.end(text, nil)
	c := res["report"].(map[string]any)["cases"].([]any)[0].(map[string]any)
	cassette := filepath.Join(dir, "tests", "cassettes", "records", "save-record.json")
	if res["verdict"] != "passed" || c["cassette"] != cassette || fmt.Sprint(c["turns"]) != "1" {
		t.Fatalf("recording drill: %v, cassette %v, turns %v, notes %v", res["failures"], c["cassette"], c["turns"], c["notes"])
	}
	if !strings.Contains(fmt.Sprint(c["notes"]), "recorded 1 model call into "+cassette) {
		t.Errorf("notes %v", c["notes"])
	}
	data, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), testKey) {
		t.Errorf("the cassette holds the API key")
	}
	if !strings.Contains(string(data), `the test replays it offline. To re-record: run the test of drill \"save-record\" again with record mode all`) {
		t.Errorf("the cassette's note does not say how to record an SDK's drill again:\n%s", data)
	}
	// The key never reaches a report either, whatever the agent returns.
	d = p.start(map[string]any{"drill": "save-record"})
	res = d.end("the key is "+testKey, nil)
	if out, _ := json.Marshal(res); strings.Contains(string(out), testKey) {
		t.Errorf("the end answer holds the API key: %s", res["report"].(map[string]any)["cases"].([]any)[0].(map[string]any)["output"])
	}
	srv.Close()

	// Replay only, no upstream, no key.
	q := startEngine(t, dir, "--record", "none")
	d = q.start(map[string]any{"drill": "save-record"})
	status, ans = q.call("POST", d.url+"/v1/chat/completions", chatBody, false)
	if status != 200 {
		t.Fatalf("replay: %d %v", status, ans)
	}
	d.op("record-store/records.save", map[string]any{"id": "record-1", "text": "hello"}, "")
	if res := d.end("Saved.", nil); res["verdict"] != "passed" {
		t.Errorf("replayed drill: %v", res["failures"])
	}

	// Another request than the recorded one.
	d = q.start(map[string]any{"drill": "save-record"})
	other := map[string]any{"model": "gpt-4.1-mini", "messages": []any{map[string]any{"role": "user", "content": "Something else."}}}
	if status, _ := q.call("POST", d.url+"/v1/chat/completions", other, false); status == 200 {
		t.Errorf("a request that is not in the cassette was answered 200")
	}
	res = d.end("", nil)
	fails, _ := json.Marshal(res["failures"])
	if res["verdict"] != "failed" || !strings.Contains(string(fails), "differs") {
		t.Errorf("a stray request: verdict %v, failures %s", res["verdict"], fails)
	}
}

// With no cassette and record none, a model call is refused with the
// reason, and the drill errs (status error, verdict failed).
func TestModelCallWithoutCassette(t *testing.T) {
	p := startEngine(t, project(t), "--record", "none")
	d := p.start(map[string]any{"drill": "save-record"})
	status, ans := p.call("POST", d.url+"/v1/chat/completions", chatBody, false)
	if status == 200 || !strings.Contains(fmt.Sprint(ans), "no cassette") {
		t.Errorf("a model call with no cassette: %d %v", status, ans)
	}
	res := d.end("", nil)
	if res["verdict"] != "failed" || res["status"] != "error" {
		t.Errorf("verdict %v, status %v", res["verdict"], res["status"])
	}
	if f := fmt.Sprint(res["failures"]); !strings.Contains(f, "no cassette") || !strings.Contains(f, `run the test of drill "save-record" again with record mode once (the record option of runDrills / run_drills, or dryfire engine --record once)`) {
		t.Errorf("failures %s; want the way to record an SDK's drill", f)
	}
}
