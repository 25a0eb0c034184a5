package report

// Print prints s, whole lines, after the cases printed so far and before
// what Finish prints (the status line cleared first): the comparison
// with a baseline comes before a run's last line.
func (t *Text) Print(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearStatus()
	t.buf.WriteString(s)
	t.flush()
}
