// Command bare is the limit of the box for the serving benchmarks: a bare
// net/http handler that answers every POST with the same bytes dryfire
// would send, so that dryfire's figures can be read as a share of it.
package main

import (
	"bytes"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	body := flag.String("body", `{"content":"{\"tier\":\"gold\"}","is_error":false}`, "the answer's bytes")
	bodyFile := flag.String("body-file", "", "read the answer's bytes from this file (over -body)")
	ctype := flag.String("content-type", "application/json", "the answer's content type")
	flushEvents := flag.Bool("flush-events", false, "write the answer as server-sent events, flushing after each (as a stream replayed event by event)")
	mcp := flag.Bool("mcp", false, "let an MCP client open a session first: initialize gets an Mcp-Session-Id, a notification 202")
	timeouts := flag.Bool("timeouts", false, "bound reading requests as dryfire serve does (header 30 s, whole request 60 s, idle 2 min): the timers net/http then keeps per request")
	flag.Parse()
	if *bodyFile != "" {
		data, err := os.ReadFile(*bodyFile)
		if err != nil {
			log.Fatal(err)
		}
		*body = string(data)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The address on stdout, for the script.
	os.Stdout.WriteString("http://" + l.Addr().String() + "\n")
	data := []byte(*body)
	var events [][]byte
	if *flushEvents { // each ends with its blank line; the rest, if any, last
		events = slices.DeleteFunc(bytes.SplitAfter(data, []byte("\n\n")), func(e []byte) bool { return len(e) == 0 })
	}
	srv := &http.Server{}
	if *timeouts {
		srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout = 30*time.Second, 60*time.Second, 2*time.Minute
	}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the request like a real handler must.
		buf := make([]byte, 4096)
		n := 0
		for {
			k, err := r.Body.Read(buf[n:])
			n += k
			if n == len(buf) {
				n = 0
			}
			if err != nil {
				break
			}
		}
		if *mcp && r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", "bare")
		}
		if *mcp && bytes.Contains(buf[:n], []byte(`"notifications/`)) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", *ctype)
		if len(events) == 0 {
			w.Write(data)
			return
		}
		f := w.(http.Flusher)
		for _, ev := range events {
			w.Write(ev)
			f.Flush()
		}
	})
	log.Fatal(srv.Serve(l))
}
