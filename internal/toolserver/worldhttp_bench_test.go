package toolserver

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
)

var overhead = flag.Bool("overhead", false, "measure an HTTP-bound operation against /ops for the same operation (TestWorldHTTPOverhead)")

// routeBench is the pay world's server with one refund, re_1, and the two
// requests that read it: over /ops and over the package's own route.
func routeBench(tb testing.TB) (*Server, map[string]func() *http.Request) {
	w, ds := world.Load("testdata/pay.world.yaml", nil)
	if ds.HasErrors() {
		tb.Fatal(ds)
	}
	in, err := w.New(world.Drill{})
	if err != nil {
		tb.Fatal(err)
	}
	in.SetEvidenceLimit(1000)
	srv := New(NewScope(ScopeOptions{Suite: &spec.Suite{File: "pay.dryfire.yaml"}, World: in, NoRecords: true}), Options{})
	req := httptest.NewRequest("POST", "/http/payments/v1/charges/ch_1/refunds", strings.NewReader(`{"amount": 5}`))
	req.Header.Set("Authorization", "Bearer sk_agent")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 201 {
		tb.Fatal(rec.Code, rec.Body.String())
	}
	return srv, map[string]func() *http.Request{
		"ops": func() *http.Request {
			return httptest.NewRequest("POST", "/ops/payments/refunds.get", strings.NewReader(`{"arguments": {"id": "re_1"}}`))
		},
		"http": func() *http.Request {
			r := httptest.NewRequest("GET", "/http/payments/v1/refunds/re_1", nil)
			r.Header.Set("Authorization", "Bearer sk_agent")
			return r
		},
		// A call with a JSON body: a quote, which keeps no state.
		"ops-body": func() *http.Request {
			return httptest.NewRequest("POST", "/ops/payments/quotes.create", strings.NewReader(`{"arguments": {"charge": "ch_1", "amount": 120}}`))
		},
		"http-body": func() *http.Request {
			r := httptest.NewRequest("POST", "/http/payments/v1/quotes", strings.NewReader(`{"charge": "ch_1", "amount": 120}`))
			r.Header.Set("Authorization", "Bearer sk_agent")
			return r
		},
	}
}

// The handler alone (no network): one read of a refund over /ops and over
// its route.
func BenchmarkWorldRoute(b *testing.B) {
	srv, reqs := routeBench(b)
	for _, name := range []string{"ops", "http", "ops-body", "http-body"} {
		b.Run(name, func(b *testing.B) {
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				srv.ServeHTTP(w, reqs[name]())
				if w.status != 200 {
					b.Fatal(w.status)
				}
			}
		})
	}
}

// TestWorldHTTPOverhead measures, in one run, interleaved rounds of the
// same operation over /ops and over its HTTP route, in the handler and
// over loopback with a keep-alive client, and prints the median per call
// of each and their ratio (go test -run WorldHTTPOverhead -overhead -v).
func TestWorldHTTPOverhead(t *testing.T) {
	if !*overhead {
		t.Skip("give -overhead to measure")
	}
	srv, reqs := routeBench(t)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client := hs.Client()
	const rounds, calls = 21, 1000
	loop := map[string]func(string){
		"handler": func(name string) {
			w := &discard{h: http.Header{}}
			for range calls {
				w.reset()
				srv.ServeHTTP(w, reqs[name]())
				if w.status != 200 {
					t.Fatalf("%s: %d", name, w.status)
				}
			}
		},
		"loopback": func(name string) {
			for range calls {
				r := reqs[name]()
				out, _ := http.NewRequest(r.Method, hs.URL+r.URL.Path, r.Body)
				out.Header = r.Header
				resp, err := client.Do(out)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatal(resp.Status)
				}
			}
		},
	}
	for _, pair := range [][2]string{{"ops", "http"}, {"ops-body", "http-body"}} {
		for _, where := range []string{"handler", "loopback"} {
			measure(t, where, pair, rounds, calls, loop[where])
		}
	}
}

// measure runs interleaved rounds of the pair's two requests (the order
// alternating) and logs the median per call of each, and their ratio.
func measure(t *testing.T, where string, pair [2]string, rounds, calls int, loop func(string)) {
	per := map[string][]time.Duration{}
	for i := range rounds {
		order := []string{pair[0], pair[1]}
		if i%2 == 1 {
			order = []string{pair[1], pair[0]}
		}
		for _, name := range order {
			start := time.Now()
			loop(name)
			per[name] = append(per[name], time.Since(start)/time.Duration(calls))
		}
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	o, h := med(per[pair[0]]), med(per[pair[1]])
	t.Logf("%s, %s vs %s: /ops %v, HTTP route %v per call (medians of %d rounds of %d): HTTP/ops = %.3f", where, pair[0], pair[1], o, h, rounds, calls, float64(h)/float64(o))
}
