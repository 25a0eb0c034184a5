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

// A drill with a script (a world suite without agent) has its model calls
// answered by the script: no key, no cassette, record none; the verdict
// passes, and the report lists the served turn beside the request.
func TestScriptedDrill(t *testing.T) {
	dir := project(t)
	suite := filepath.Join(dir, "tests", "records.dryfire.yaml")
	data, err := os.ReadFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	scripted := strings.Replace(string(data), "    input: Save record-1 with the text hello.\n", `    input: Save record-1 with the text hello.
    script:
      - when: {user: record-1}
        text: Saved.
`, 1)
	if err := os.WriteFile(suite, []byte(scripted), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startEngine(t, dir, "--record", "none")
	d := p.start(map[string]any{"drill": "save-record"})
	status, ans := p.call("POST", d.url+"/v1/chat/completions", chatBody, false)
	if status != 200 {
		t.Fatalf("a scripted drill's model call: %d %v", status, ans)
	}
	if text := ans["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; text != "Saved." {
		t.Errorf("answer %v", text)
	}
	d.op("record-store/records.save", map[string]any{"id": "record-1", "text": "hello"}, "")
	res := d.end("Saved.", nil)
	c := res["report"].(map[string]any)["cases"].([]any)[0].(map[string]any)
	if res["verdict"] != "passed" || c["cassette"] != nil {
		t.Fatalf("verdict %v (%v), cassette %v", res["verdict"], res["failures"], c["cassette"])
	}
	if got := fmt.Sprint(c["script"]); got != `[map[api:openai-chat last_message:user: "Save record-1 with the text hello." request:1 streamed:false turn:1]]` {
		t.Errorf("script %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "cassettes")); err == nil {
		t.Errorf("a scripted drill wrote a cassette")
	}
	// A second call: no turn is left, and the drill errs saying so.
	d = p.start(map[string]any{"drill": "save-record"})
	p.call("POST", d.url+"/v1/chat/completions", chatBody, false)
	if status, _ := p.call("POST", d.url+"/v1/chat/completions", chatBody, false); status != 400 {
		t.Errorf("a call past the script: %d", status)
	}
	res = d.end("", nil)
	if f := fmt.Sprint(res["failures"]); res["status"] != "error" || !strings.Contains(f, "model request 2 matches no turn of the script: its only turn is served (turn 1 (request 1))") {
		t.Errorf("status %v, failures %s", res["status"], f)
	}
}
