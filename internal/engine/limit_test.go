package engine_test

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRunningDrillsAreBounded: drills never ended used to be kept for
// the engine's life (25,000 starts: 30 → 406 MB). Past its limit of
// running drills a start is refused with TOO_MANY_DRILLS, naming the
// limit; ending one makes room; a drill idle past DRYFIRE_DRILL_IDLE_S
// is abandoned when a start needs its room, and says so when ended.
func TestRunningDrillsAreBounded(t *testing.T) {
	dir := project(t)
	p := startEngineEnv(t, dir, []string{"DRYFIRE_MAX_DRILLS=2", "DRYFIRE_DRILL_IDLE_S=3600"})
	a := p.start(map[string]any{"drill": "save-record"})
	p.start(map[string]any{"drill": "save-record"})
	status, m := p.call("POST", "/engine/drills", map[string]any{"drill": "save-record"}, true)
	if status != http.StatusTooManyRequests {
		t.Fatalf("the third start: %d %v; want 429", status, m)
	}
	e := m["error"].(map[string]any)
	if e["code"] != "TOO_MANY_DRILLS" || !strings.Contains(e["message"].(string), "the engine has 2 drills running, its limit (DRYFIRE_MAX_DRILLS, default 1000)") {
		t.Fatalf("the third start: %v", e)
	}
	a.end("done", nil)
	p.start(map[string]any{"drill": "save-record"})

	q := startEngineEnv(t, dir, []string{"DRYFIRE_MAX_DRILLS=2", "DRYFIRE_DRILL_IDLE_S=2"})
	old := q.start(map[string]any{"drill": "save-record"})
	kept := q.start(map[string]any{"drill": "save-record"})
	time.Sleep(2200 * time.Millisecond)
	// kept is used just before the start (its binding): only old is idle.
	if status, m := kept.op("record-store/records.get", map[string]any{"id": "record-1"}, ""); status >= 500 {
		t.Fatalf("get: %d %v", status, m)
	}
	q.start(map[string]any{"drill": "save-record"}) // old was idle: abandoned for room
	status, m = q.call("POST", "/engine/drills/"+old.id+"/end", map[string]any{"output": "late"}, true)
	if status != http.StatusGone || !strings.Contains(m["error"].(map[string]any)["message"].(string), "was abandoned: it was idle for 2s or longer when the engine, at its limit of 2 running drills, needed room") {
		t.Fatalf("ending the idle drill: %d %v", status, m)
	}
	kept.end("done", nil) // used meanwhile: still running

	cmd := exec.Command(bin, "engine")
	cmd.Dir, cmd.Env = dir, append(engineEnv(), "DRYFIRE_MAX_DRILLS=0")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `DRYFIRE_MAX_DRILLS="0": want a whole number of drills, at least 1`) {
		t.Fatalf("DRYFIRE_MAX_DRILLS=0: %v %s", err, out)
	}
}
