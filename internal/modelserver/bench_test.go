package modelserver

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
)

// discard is a ResponseWriter that keeps nothing.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(status int)      { d.status = status }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discard) Flush()                      {}

// recorded3 records the 3-turn chat (JSON or streamed) against the fake
// and returns the options that replay it.
func recorded3(b *testing.B, stream bool) (Options, []string) {
	b.Helper()
	dir := b.TempDir()
	fake := newFake(OpenAIChat)
	o := upstreamOptions(caseOptions(dir, cassette.Once), fake.URL)
	e := mustNew(b, o)
	root := serve(b, e, "")
	conv := conversation(OpenAIChat, stream)
	for _, body := range conv {
		if r := post(b, http.DefaultClient, root, OpenAIChat, body); r.status != 200 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
	if _, err := e.Finish(); err != nil {
		b.Fatal(err)
	}
	fake.Close()
	return caseOptions(dir, cassette.None), conv
}

// BenchmarkReplay replays a 3-turn chat (one op is one model call; the
// case is Reset after its third) in the handler alone, and through a
// loopback HTTP server with one keep-alive connection, as an SDK calls it.
func BenchmarkReplay(b *testing.B) {
	for _, kind := range []string{"json", "stream", "stream-coalesced"} {
		stream := kind != "json"
		b.Run(kind+"/handler", func(b *testing.B) {
			o, conv := recorded3(b, stream)
			o.CoalesceStreams = kind == "stream-coalesced"
			e := mustNew(b, o)
			bodies := make([][]byte, len(conv))
			for i, c := range conv {
				bodies[i] = []byte(c)
			}
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				k := i % 3
				if k == 0 && i > 0 {
					e.Reset()
				}
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(bodies[k]))
				req.Header.Set("Authorization", "Bearer "+DummyKey)
				clear(w.h)
				e.ServeHTTP(w, req)
				if w.status != 200 {
					b.Fatalf("status %d", w.status)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
		if kind != "stream-coalesced" {
			// A new endpoint per conversation, as for a case run: the
			// cassette read and every request canonicalised.
			b.Run(kind+"/cold", func(b *testing.B) {
				o, conv := recorded3(b, stream)
				w := &discard{h: http.Header{}}
				var e *Endpoint
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					k := i % 3
					if k == 0 {
						e = mustNew(b, o)
					}
					req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(conv[k]))
					clear(w.h)
					e.ServeHTTP(w, req)
					if w.status != 200 {
						b.Fatalf("status %d", w.status)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			})
		}
		b.Run(kind+"/http", func(b *testing.B) {
			o, conv := recorded3(b, stream)
			o.CoalesceStreams = kind == "stream-coalesced"
			e := mustNew(b, o)
			srv := httptest.NewServer(e)
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			url := srv.URL + "/v1/chat/completions"
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				k := i % 3
				if k == 0 && i > 0 {
					e.Reset()
				}
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(conv[k]))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+DummyKey)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}
