// Command soak runs `dryfire serve` on a world suite under mixed traffic
// for a while and reports whether it stayed answerable and bounded:
//
//   - tool calls (POST /tools/NAME), world operations (POST /ops/...) and
//     MCP tools/call in long-lived sessions, each checked for the answer a
//     well-formed request must get;
//   - MCP sessions opened (initialize) and abandoned, -sessions in all;
//   - slow clients: connections that trickle a body a byte at a time, and
//     connections that open and send nothing;
//   - GET /world/evidence pages.
//
// Every -sample it reads the server's resident memory (VmRSS, VmHWM of
// /proc/PID/status) and prints one line; at the end a summary, and exit
// status 1 if a well-formed request failed or the peak RSS passed -max-rss.
//
//	go build -o /tmp/dryfire ./cmd/dryfire
//	go run ./bench/soak -bin /tmp/dryfire -suite examples/world/support.dryfire.yaml -d 10m
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	var (
		bin      = flag.String("bin", "dryfire", "the dryfire binary")
		suite    = flag.String("suite", "examples/world/support.dryfire.yaml", "a world suite to serve")
		duration = flag.Duration("d", 10*time.Minute, "how long to soak")
		sessions = flag.Int("sessions", 100_000, "MCP sessions to open and abandon over the run")
		slow     = flag.Int("slow", 50, "slow clients (half trickle a body, half send nothing)")
		openers  = flag.Int("openers", 4, "goroutines opening the abandoned sessions")
		workers  = flag.Int("workers", 2, "closed-loop workers per kind of well-formed traffic")
		sample   = flag.Duration("sample", 30*time.Second, "how often to print RSS")
		maxRSS   = flag.Int("max-rss", 512, "the bound on peak RSS, MiB")
	)
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()

	cmd := exec.Command(*bin, "serve", *suite, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	check(err)
	check(cmd.Start())
	defer cmd.Process.Kill()
	base := listenAddr(stderr)
	pid := cmd.Process.Pid
	fmt.Printf("soak: dryfire serve %s (pid %d) at %s for %v\n", *suite, pid, base, *duration)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	st := stats{counts: map[string]int{}}
	var wg sync.WaitGroup
	loop := func(name string, n int, f func() error) {
		for range n {
			wg.Go(func() {
				for ctx.Err() == nil {
					if err := f(); err != nil && ctx.Err() == nil {
						st.fail(name, err)
					} else {
						st.ok(name)
					}
				}
			})
		}
	}
	loop("tools", *workers, func() error {
		return post(client, base+"/tools/lookup_order", `{"order_id":"A-991"}`, `"is_error":false`)
	})
	loop("ops", *workers, func() error {
		return post(client, base+"/ops/orders/orders.get", `{"arguments":{"order_id":"A-991"}}`, `"status":"ok"`)
	})
	loop("mcp", *workers, func() error { return mcpSession(ctx, client, base, 50) })
	loop("evidence", 1, func() error {
		time.Sleep(200 * time.Millisecond)
		return get(client, base+"/world/evidence?limit=100", `"evidence"`)
	})
	// Sessions opened and abandoned, spread over the run by several
	// openers (one initialize takes a while on a loaded machine).
	var opened atomic.Int64
	for range *openers {
		wg.Go(func() {
			every := time.Duration(*openers) * *duration / time.Duration(max(1, *sessions))
			tick := time.NewTicker(max(every, time.Microsecond))
			defer tick.Stop()
			for opened.Add(1) <= int64(*sessions) && ctx.Err() == nil {
				<-tick.C
				if _, err := initialize(client, base); err != nil && ctx.Err() == nil {
					st.fail("abandoned", err)
				} else {
					st.ok("abandoned")
				}
			}
		})
	}
	// Slow clients, replaced as the server cuts them off: half trickle a
	// body (one more of an odd number), half send nothing.
	loop("slow", (*slow+1)/2, func() error { slowClient(ctx, base, true); return nil })
	loop("slow", *slow/2, func() error { slowClient(ctx, base, false); return nil })

	var peak, last int
	t := time.NewTicker(*sample)
	start := time.Now()
	printSample := func() {
		rss, hwm := memory(pid)
		last, peak = rss, max(peak, hwm)
		fmt.Printf("%6.0fs  rss %4d MiB  peak %4d MiB  %s\n", time.Since(start).Seconds(), rss, hwm, st.line())
	}
	for ctx.Err() == nil {
		select {
		case <-t.C:
			printSample()
		case <-ctx.Done():
		}
	}
	printSample()
	wg.Wait()
	// After the load: the server still answers.
	if err := post(&http.Client{Timeout: 10 * time.Second}, base+"/tools/lookup_order", `{"order_id":"A-991"}`, `"is_error":false`); err != nil {
		st.fail("after", err)
	}
	fmt.Printf("soak: %v, peak RSS %d MiB (bound %d), last %d MiB; %s\n", time.Since(start).Round(time.Second), peak, *maxRSS, last, st.line())
	if st.failures.Load() > 0 || peak > *maxRSS {
		fmt.Println("soak: FAILED")
		for _, e := range st.errs() {
			fmt.Println("  ", e)
		}
		os.Exit(1)
	}
	fmt.Println("soak: ok")
}

var listening = regexp.MustCompile(`on http://(\S+): MCP`)

func listenAddr(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, r)
			return "http://" + m[1]
		}
	}
	fmt.Fprintln(os.Stderr, "soak: dryfire serve did not say where it listens")
	os.Exit(2)
	return ""
}

type stats struct {
	mu       sync.Mutex
	counts   map[string]int
	failures atomic.Int64
	first    []string
}

func (s *stats) ok(name string) {
	s.mu.Lock()
	s.counts[name]++
	s.mu.Unlock()
}

func (s *stats) fail(name string, err error) {
	s.failures.Add(1)
	s.mu.Lock()
	if len(s.first) < 10 {
		s.first = append(s.first, name+": "+err.Error())
	}
	s.mu.Unlock()
}

func (s *stats) line() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, k := range []string{"tools", "ops", "mcp", "evidence", "abandoned", "slow"} {
		fmt.Fprintf(&b, "%s %d  ", k, s.counts[k])
	}
	fmt.Fprintf(&b, "failed %d", s.failures.Load())
	return b.String()
}

func (s *stats) errs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.first...)
}

func post(c *http.Client, url, body, want string) error {
	res, err := c.Post(url, "application/json", strings.NewReader(body))
	return answer(res, err, want)
}

func get(c *http.Client, url, want string) error {
	res, err := c.Get(url)
	return answer(res, err, want)
}

func answer(res *http.Response, err error, want string) error {
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != 200 || !bytes.Contains(data, []byte(want)) {
		return fmt.Errorf("status %d: %.200s", res.StatusCode, data)
	}
	return nil
}

const legacy = "2025-06-18"

// initialize opens an MCP session and returns its id.
func initialize(c *http.Client, base string) (string, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + legacy + `","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`
	res, err := rpc(c, base, "", body)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || sid == "" || !bytes.Contains(data, []byte(`"protocolVersion"`)) {
		return "", fmt.Errorf("initialize: status %d, session %q: %.200s", res.StatusCode, sid, data)
	}
	return sid, nil
}

// mcpSession opens a session, makes n tool calls in it, and ends it.
func mcpSession(ctx context.Context, c *http.Client, base string, n int) error {
	sid, err := initialize(c, base)
	if err != nil {
		return err
	}
	res, err := rpc(c, base, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+2) + `,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"}}}`
		res, err := rpc(c, base, sid, body)
		if err != nil {
			return err
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var m struct {
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		line := data
		if i := bytes.Index(data, []byte("data: ")); i >= 0 {
			line = bytes.TrimSpace(data[i+6:])
		}
		if res.StatusCode != 200 || json.Unmarshal(line, &m) != nil || m.Result.IsError {
			return fmt.Errorf("tools/call: status %d: %.200s", res.StatusCode, data)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, base+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if res, err := c.Do(req); err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	return nil
}

func rpc(c *http.Client, base, sid, body string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", legacy)
	}
	return c.Do(req)
}

// slowClient holds a connection: trickling a body one byte every 5 s, or
// sending nothing, until the server closes it or the soak ends.
func slowClient(ctx context.Context, base string, trickle bool) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		time.Sleep(time.Second)
		return
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if !trickle {
		io.Copy(io.Discard, conn) // until the server closes it
		return
	}
	fmt.Fprintf(conn, "POST /tools/lookup_order HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
	for ctx.Err() == nil {
		if _, err := conn.Write([]byte(" ")); err != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

// memory is the VmRSS and VmHWM of pid, MiB.
func memory(pid int) (rss, hwm int) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) >= 2 {
			kb, _ := strconv.Atoi(f[1])
			switch f[0] {
			case "VmRSS:":
				rss = kb / 1024
			case "VmHWM:":
				hwm = kb / 1024
			}
		}
	}
	return rss, hwm
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
}
