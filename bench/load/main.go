// Command load is the load client of the serving benchmarks: a closed loop
// of N connections, each sending its next request as soon as the previous
// answer is read in full, reporting requests/s and the raw latencies it
// saw (no coordinated-omission correction: these are the latencies a
// client of this box gets).
//
// Modes:
//
//	-mode post   POST -body to -url (HTTP tools, model replay, the bare handler)
//	-mode mcp    MCP over streamable HTTP: each connection is a session
//	             (initialize, notifications/initialized), then tools/call
//	             of -tool with -args, over and over
//	-mode seq    POST the bodies of -bodies (a JSON array of request
//	             objects) in turn, as one conversation after another
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
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
	var count, failures atomic.Int64
	lat := make([][]time.Duration, *conns)
	var wg sync.WaitGroup
	for i := range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := worker{client: client, url: *url, expect: *expect}
			if *mode == "mcp" {
				if err := w.mcpInit(); err != nil {
					log.Fatalf("load: MCP session %d: %v", i, err)
				}
				w.body = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, *tool, *args))
			} else {
				w.body = []byte(*body)
			}
			for n := 0; !stop.Load(); n++ {
				b := w.body
				if seq != nil {
					b = seq[n%len(seq)]
				}
				start := time.Now()
				err := w.do(b)
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
		}()
	}
	time.Sleep(*warmup)
	measuring.Store(true)
	t0 := time.Now()
	time.Sleep(*duration)
	measuring.Store(false)
	el := time.Since(t0)
	stop.Store(true)
	wg.Wait()

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
	label := *name
	if label == "" {
		label = *mode + " " + *url
	}
	fmt.Printf("%-40s %9.0f req/s  p50 %-9v p90 %-9v p99 %-9v n=%d errors=%d\n",
		label, float64(count.Load())/el.Seconds(), pct(0.5), pct(0.9), pct(0.99), count.Load(), failures.Load())
	if failures.Load() > 0 {
		os.Exit(1)
	}
}

type worker struct {
	client  *http.Client
	url     string
	body    []byte
	session string
	expect  string
}

func (w *worker) do(body []byte) error {
	req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if w.session != "" {
		req.Header.Set("Mcp-Session-Id", w.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Accept", "application/json, text/event-stream")
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
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("initialize answered %d", resp.StatusCode)
	}
	w.session = resp.Header.Get("Mcp-Session-Id")
	if w.session == "" {
		return fmt.Errorf("initialize gave no Mcp-Session-Id")
	}
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	return w.doStatus(note, http.StatusAccepted)
}

func (w *worker) doStatus(body string, want int) error {
	req, _ := http.NewRequest(http.MethodPost, w.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", w.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("%s answered %d, want %d", body, resp.StatusCode, want)
	}
	return nil
}
