package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A body trickled at 1 byte / 5 s held a connection for more than 65 s:
// reading a body is bounded, a long answer stream is not, after a body or
// without one.
func TestHostileTrickledBodyIsCutAtTheDeadline(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "read: "+err.Error(), http.StatusRequestTimeout)
			return
		}
		// The body is read: an answer that streams past the deadline is fine.
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(700 * time.Millisecond):
			io.WriteString(w, "streamed")
		case <-r.Context().Done():
			io.WriteString(w, "request ended: "+context.Cause(r.Context()).Error())
		}
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config = httpServer(h, 400*time.Millisecond)
	srv.Start()
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab")
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "timeout") || time.Since(start) > 5*time.Second {
		t.Errorf("%d %s after %v", resp.StatusCode, b, time.Since(start))
	}

	resp2, err := http.Post(srv.URL, "text/plain", strings.NewReader("whole body"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp2.Body)
	if resp2.StatusCode != 200 || string(b) != "streamed" {
		t.Errorf("a read body and a slow answer: %d %q", resp2.StatusCode, b)
	}
	// Without a body (an MCP GET stream), the same.
	resp3, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp3.Body)
	if resp3.StatusCode != 200 || string(b) != "streamed" {
		t.Errorf("no body and a slow answer: %d %q", resp3.StatusCode, b)
	}
}
