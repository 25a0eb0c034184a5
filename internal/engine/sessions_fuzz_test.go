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
