package report

// Aside prints s, whole lines, where the printer is: after the cases
// printed so far, the status line cleared first (the last lines of a
// run come after it: a comparison with a baseline, say).
func (t *Text) Aside(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearStatus()
	t.buf.WriteString(s)
	t.flush()
}
