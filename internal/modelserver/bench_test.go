package modelserver

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/wire"
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

// readCloser is a request body read again and again.
type readCloser struct{ bytes.Reader }

func (*readCloser) Close() error { return nil }

// recorded3 records the 3-turn chat (JSON or streamed) against the fake
// and returns the options that replay it.
func recorded3(b *testing.B, stream bool) (Options, []string) {
	b.Helper()
	dir := b.TempDir()
	fake := newFake(wire.OpenAIChat)
	o := upstreamOptions(caseOptions(dir, cassette.Once), fake.URL)
	e := mustNew(b, o)
	root := serve(b, e, "")
	conv := conversation(wire.OpenAIChat, stream)
	for _, body := range conv {
		if r := post(b, http.DefaultClient, root, wire.OpenAIChat, body); r.status != 200 {
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
		if kind != "stream" {
			// As dryfire serve answers (--case): each request by its
			// content, streams in one write, no list of calls; the
			// requests as bench/load sends them (bench/table's replay row).
			b.Run(kind+"/serve", func(b *testing.B) {
				o, conv := recorded3(b, stream)
				o.ByContent, o.CoalesceStreams, o.NoRecords = true, true, true
				e := mustNew(b, o)
				if !e.ByContent() {
					b.Fatal("not answered by content")
				}
				reqs := make([]*http.Request, len(conv))
				bodies := make([][]byte, len(conv))
				for i, c := range conv {
					bodies[i] = []byte(c)
					reqs[i] = httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/v1/chat/completions", nil)
					reqs[i].Header.Set("User-Agent", "Go-http-client/1.1")
					reqs[i].Header.Set("Content-Type", "application/json")
					reqs[i].ContentLength = int64(len(c))
				}
				body := &readCloser{}
				w := &discard{h: http.Header{}}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					k := i % 3
					body.Reset(bodies[k])
					reqs[k].Body = body
					clear(w.h)
					e.ServeHTTP(w, reqs[k])
					if w.status != 200 {
						b.Fatalf("status %d", w.status)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			})
		}
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
