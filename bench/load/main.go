// Command load is the load client of the serving benchmarks: a closed loop
// of N connections, each sending its next request as soon as the previous
// answer is read in full, reporting requests/s and the raw latencies it
// saw (no coordinated-omission correction: these are the latencies a
// client of this box gets).
//
// By default (-client raw) each connection writes its requests, built
// once, straight to a TCP connection and reads the answers with a minimal
// HTTP/1.1 reader (Content-Length or chunked bodies), so that the client
// costs a few microseconds a request and the server, not the client, is
// what is measured; -client net uses net/http's client instead (about ten
// times the client work: on a 2-core box it, not the server, is then the
// limit). MCP sessions are opened with net/http either way.
//
// Modes:
//
//	-mode post   POST -body to -url (HTTP tools, model replay, the bare handler)
//	-mode mcp    MCP over streamable HTTP: each connection is a session
//	             (initialize, notifications/initialized), then tools/call
//	             of -tool with -args, over and over
//	-mode mcp2026  MCP 2026-07-28 (stateless): tools/call of -tool with
//	             -args, with the headers and _meta that era asks for
//	-mode seq    POST the bodies of -bodies (a JSON array of request
//	             objects) in turn, as one conversation after another
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	var (
		url      = flag.String("url", "", "target URL")
		mode     = flag.String("mode", "post", "post | mcp | seq")
		body     = flag.String("body", "{}", "request body (post)")
		bodies   = flag.String("bodies", "", "file with a JSON array of request bodies, sent in turn (seq)")
		tool     = flag.String("tool", "", "tool name (mcp)")
		args     = flag.String("args", "{}", "tool arguments as JSON (mcp)")
		conns    = flag.Int("c", 8, "connections")
		duration = flag.Duration("d", 5*time.Second, "measured time")
		warmup   = flag.Duration("warmup", time.Second, "unmeasured time first")
		expect   = flag.String("expect", "", "a substring every answer must hold")
		name     = flag.String("name", "", "label for the result line")
		save     = flag.String("save", "", "write the body of the first answer to this file")
		tsv      = flag.Bool("tsv", false, "print the result as name, req/s, p50, p90, p99 (µs), n, errors, tab-separated")
		kind     = flag.String("client", "raw", "raw (requests written to the connection, answers read by a minimal HTTP/1.1 reader) or net (net/http's client)")
		total    = flag.Int64("n", 0, "send exactly this many requests in all, then stop (no warm-up, no time limit): for instruction counts of a server")
	)
	flag.Parse()
	if *url == "" {
		log.Fatal("load: -url is required")
	}
	var seq [][]byte
	if *mode == "seq" {
		data, err := os.ReadFile(*bodies)
		if err != nil {
			log.Fatal(err)
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			log.Fatalf("load: %s: %v", *bodies, err)
		}
		for _, r := range raw {
			seq = append(seq, []byte(r))
		}
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns, DisableCompression: true}
	client := &http.Client{Transport: tr}

	var measuring atomic.Bool
	var stop atomic.Bool
	var count, failures, sent atomic.Int64
	lat := make([][]time.Duration, *conns)
	var wg sync.WaitGroup
	for i := range *conns {
		wg.Go(func() {
			w := worker{client: client, url: *url, expect: *expect}
			switch *mode {
			case "mcp":
				if err := w.mcpInit(); err != nil {
					log.Fatalf("load: MCP session %d: %v", i, err)
				}
				w.body = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, *tool, *args))
			case "mcp2026":
				w.modern = *tool
				w.body = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"dryfire-bench","version":"1"}}}}`, *tool, *args))
			default:
				w.body = []byte(*body)
			}
			var rc *rawConn
			var reqs [][]byte
			if *kind == "raw" {
				var err error
				if rc, err = dialRaw(w.url); err != nil {
					log.Fatalf("load: %v", err)
				}
				defer rc.c.Close()
				list := seq
				if list == nil {
					list = [][]byte{w.body}
				}
				for _, b := range list {
					reqs = append(reqs, rc.build(b, w.headers()))
				}
			}
			for n := 0; !stop.Load(); n++ {
				if *total > 0 && sent.Add(1) > *total {
					break
				}
				b := w.body
				if seq != nil {
					b = seq[n%len(seq)]
				}
				start := time.Now()
				var err error
				if rc != nil {
					w.last, err = rc.do(reqs[n%len(reqs)], w.expect)
				} else {
					err = w.do(b)
				}
				if err == nil && *save != "" && i == 0 && n == 0 {
					if werr := os.WriteFile(*save, w.last, 0o644); werr != nil {
						log.Fatal(werr)
					}
				}
				el := time.Since(start)
				if !measuring.Load() {
					continue
				}
				if err != nil {
					if failures.Add(1) == 1 {
						log.Printf("load: %v", err)
					}
					continue
				}
				count.Add(1)
				lat[i] = append(lat[i], el)
			}
		})
	}
	var el time.Duration
	if *total > 0 {
		measuring.Store(true)
		t0 := time.Now()
		wg.Wait()
		el = time.Since(t0)
	} else {
		time.Sleep(*warmup)
		measuring.Store(true)
		t0 := time.Now()
		time.Sleep(*duration)
		measuring.Store(false)
		el = time.Since(t0)
		stop.Store(true)
		wg.Wait()
	}

	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(float64(len(all))*p))]
	}
	label := cmp.Or(*name, *mode+" "+*url)
	if *tsv {
		us := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond)) }
		fmt.Printf("%s\t%.0f\t%s\t%s\t%s\t%d\t%d\n", label, float64(count.Load())/el.Seconds(), us(pct(0.5)), us(pct(0.9)), us(pct(0.99)), count.Load(), failures.Load())
	} else {
		fmt.Printf("%-40s %9.0f req/s  p50 %-9v p90 %-9v p99 %-9v n=%d errors=%d\n",
			label, float64(count.Load())/el.Seconds(), pct(0.5), pct(0.9), pct(0.99), count.Load(), failures.Load())
	}
	if failures.Load() > 0 {
		os.Exit(1)
	}
}

type worker struct {
	client  *http.Client
	url     string
	body    []byte
	session string
	modern  string // mcp2026: the tool name
	expect  string
	last    []byte // the last answer's body
}

// headers are the request headers besides Host and Content-Length.
func (w *worker) headers() [][2]string {
	h := [][2]string{{"Content-Type", "application/json"}}
	if w.session != "" {
		h = append(h, [2]string{"Mcp-Session-Id", w.session}, [2]string{"Mcp-Protocol-Version", "2025-11-25"}, [2]string{"Accept", "application/json, text/event-stream"})
	}
	if w.modern != "" {
		h = append(h, [2]string{"Mcp-Protocol-Version", "2026-07-28"}, [2]string{"Mcp-Method", "tools/call"}, [2]string{"Mcp-Name", w.modern}, [2]string{"Accept", "application/json, text/event-stream"})
	}
	return h
}

func (w *worker) do(body []byte) error {
	req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, kv := range w.headers() {
		req.Header.Set(kv[0], kv[1])
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	w.last = data
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %d: %.200s", w.url, resp.StatusCode, data)
	}
	if w.expect != "" && !bytes.Contains(data, []byte(w.expect)) {
		return fmt.Errorf("answer lacks %q: %.200s", w.expect, data)
	}
	return nil
}

// mcpInit opens a legacy-era (2025-11-25) session.
func (w *worker) mcpInit() error {
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"dryfire-bench","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, w.url, strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("initialize answered %d", resp.StatusCode)
	}
	w.session = resp.Header.Get("Mcp-Session-Id")
	if w.session == "" {
		return fmt.Errorf("initialize gave no Mcp-Session-Id")
	}
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	req, _ = http.NewRequest(http.MethodPost, w.url, strings.NewReader(note))
	for _, kv := range w.headers() {
		req.Header.Set(kv[0], kv[1])
	}
	if resp, err = w.client.Do(req); err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("%s answered %d, want %d", note, resp.StatusCode, http.StatusAccepted)
	}
	return nil
}

// rawConn is one keep-alive HTTP/1.1 connection driven by hand.
type rawConn struct {
	c    net.Conn
	r    *bufio.Reader
	host string
	path string
	body []byte // the last answer's body (reused)
}

func dialRaw(target string) (*rawConn, error) {
	u, err := neturl.Parse(target)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("-client raw needs an http:// URL, got %q", target)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c, r: bufio.NewReaderSize(c, 64<<10), host: u.Host, path: u.RequestURI()}, nil
}

// build is a whole POST request with body, as net/http's client would
// send it.
func (rc *rawConn) build(body []byte, headers [][2]string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: %d\r\n", rc.path, rc.host, len(body))
	for _, kv := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", kv[0], kv[1])
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// do sends a request and reads its answer in full; a status other than
// 2xx or an answer without expect is an error.
func (rc *rawConn) do(req []byte, expect string) ([]byte, error) {
	if _, err := rc.c.Write(req); err != nil {
		return nil, err
	}
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return nil, fmt.Errorf("not an HTTP/1.1 answer: %q", line)
	}
	status, _ := strconv.Atoi(string(line[9:12]))
	length, chunked, closing := -1, false, false
	for {
		line, err = rc.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(line) <= 2 {
			break
		}
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(v))
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			closing = bytes.EqualFold(v, []byte("close"))
		}
	}
	rc.body = rc.body[:0]
	switch {
	case chunked:
		for {
			line, err = rc.r.ReadSlice('\n')
			if err != nil {
				return nil, err
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("bad chunk size %q", line)
			}
			if size == 0 {
				for { // trailers, then the blank line
					line, err = rc.r.ReadSlice('\n')
					if err != nil {
						return nil, err
					}
					if len(line) <= 2 {
						break
					}
				}
				break
			}
			n := len(rc.body)
			rc.body = append(rc.body, make([]byte, size+2)...)
			if _, err := io.ReadFull(rc.r, rc.body[n:]); err != nil {
				return nil, err
			}
			rc.body = rc.body[:len(rc.body)-2]
		}
	case length >= 0:
		rc.body = append(rc.body, make([]byte, length)...)
		if _, err := io.ReadFull(rc.r, rc.body); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("answer %d has neither Content-Length nor chunked encoding", status)
	}
	if closing {
		return nil, fmt.Errorf("the server closed the connection")
	}
	if status/100 != 2 {
		return nil, fmt.Errorf("answered %d: %.200s", status, rc.body)
	}
	if expect != "" && !bytes.Contains(rc.body, []byte(expect)) {
		return nil, fmt.Errorf("answer lacks %q: %.200s", expect, rc.body)
	}
	return rc.body, nil
}
