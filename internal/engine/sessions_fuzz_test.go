package engine

import "testing"

// FuzzSessionBodies: the bodies of POST /sessions, reset and step are
// read, or refused with what is wrong; nothing panics.
func FuzzSessionBodies(f *testing.F) {
	f.Add([]byte(`{"case": "x", "seed": 7, "episode_id": "e"}`))
	f.Add([]byte(`{"action": {"tool": "t", "arguments": {"a": 1}}}`))
	f.Add([]byte(`{"action": {"answer": "done"}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"seed": 1e999}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		parseSessionStart(body, "reset", resetKeys)
		if m, aerr := object(body, "step", stepKeys); aerr == nil && !isNull(m["action"]) {
			object(m["action"], "an action", actionKeys)
		}
	})
}

// TestStartNamesTheFirstBadKey: a start whose keys are several non-strings
// is refused for the first in the protocol's order, every time (the keys
// were read in map order, and the message named any of them).
func TestStartNamesTheFirstBadKey(t *testing.T) {
	for range 64 {
		_, aerr := parseStart([]byte(`{"record": 1, "actor": 2, "cwd": 3, "suite": 4, "drill": 5}`))
		if aerr == nil || aerr.message != "drill must be a string, not 5" {
			t.Fatalf("got %v, want drill must be a string, not 5", aerr)
		}
	}
}
