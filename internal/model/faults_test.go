package model

import "testing"

// A cut passes the first n events of a stream, with LF or CRLF line
// ends, or all of a stream shorter than the cut.
func TestCutPoint(t *testing.T) {
	for _, tt := range []struct {
		name string
		data string
		n    int
		want string
	}{
		{"two of three", "data: 1\n\ndata: 2\n\ndata: 3\n\n", 2, "data: 1\n\ndata: 2\n\n"},
		{"crlf", "data: 1\r\n\r\ndata: 2\r\n\r\n", 1, "data: 1\r\n\r\n"},
		{"none", "data: 1\n\n", 0, ""},
		{"shorter than the cut", "data: 1\n\n", 5, "data: 1\n\n"},
	} {
		if got := tt.data[:cutPoint([]byte(tt.data), tt.n)]; got != tt.want {
			t.Errorf("%s: passed %q", tt.name, got)
		}
	}
}
