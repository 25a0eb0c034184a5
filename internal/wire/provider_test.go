package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sleeps records the waits of a caller instead of waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// answer is one scripted HTTP answer; the last one repeats.
type answer struct {
	status int
	header map[string]string
	body   string
	drop   bool          // close the connection without answering
	hang   time.Duration // wait this long (or until the client gives up) first
}

// scripted serves answers in order and counts requests.
func scripted(t *testing.T, answers ...answer) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		a := answers[min(i, len(answers)-1)]
		io.Copy(io.Discard, r.Body)
		if a.hang > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(a.hang):
			}
		}
		if a.drop {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func testCaller(retries int, s *sleeps) *caller {
	return &caller{o: Options{Provider: "anthropic", Client: &http.Client{}, Retries: retries, Timeout: 5 * time.Second, Sleep: s.sleep}}
}

func errorBody(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

const okBody = `{"ok":true}`

func TestCallerRetriesTransientStatuses(t *testing.T) {
	for _, status := range []int{408, 409, 429, 500, 502, 503, 504, 529} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv, n := scripted(t, answer{status: status, body: errorBody("overloaded_error", "busy")}, answer{status: 200, body: okBody})
			s := &sleeps{}
			data, err := testCaller(3, s).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != okBody || n.Load() != 2 || len(s.got()) != 1 {
				t.Errorf("data %s, %d requests, waits %v; want the 200 body after 2 requests and 1 wait", data, n.Load(), s.got())
			}
		})
	}
}

func TestCallerDoesNotRetryClientErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 413, 422} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv, n := scripted(t, answer{status: status, body: errorBody("invalid_request_error", "max_tokens: Field required")})
			s := &sleeps{}
			_, err := testCaller(3, s).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			want := &APIError{Provider: "anthropic", Status: status, Type: "invalid_request_error", Message: "max_tokens: Field required", Attempts: 1}
			if diff := cmp.Diff(want, ae); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
			if n.Load() != 1 || len(s.got()) != 0 {
				t.Errorf("%d requests, waits %v; want 1 request and no wait", n.Load(), s.got())
			}
		})
	}
}

func TestCallerRetriesAreBounded(t *testing.T) {
	for _, retries := range []int{0, 1, 3} {
		t.Run(fmt.Sprint(retries), func(t *testing.T) {
			srv, n := scripted(t, answer{status: 529, body: errorBody("overloaded_error", "Overloaded")})
			s := &sleeps{}
			_, err := testCaller(retries, s).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
			var ae *APIError
			if !errors.As(err, &ae) || ae.Attempts != retries+1 {
				t.Fatalf("err = %#v, want an *APIError after %d attempts", err, retries+1)
			}
			if n.Load() != int64(retries+1) || len(s.got()) != retries {
				t.Errorf("%d requests, %d waits; want %d and %d", n.Load(), len(s.got()), retries+1, retries)
			}
			want := "anthropic answered 529 Overloaded: overloaded_error: Overloaded"
			if retries > 0 {
				want += fmt.Sprintf(" (after %d attempts)", retries+1)
			}
			if err.Error() != want {
				t.Errorf("error\n got %q\nwant %q", err, want)
			}
		})
	}
}

func TestCallerWaits(t *testing.T) {
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		header   map[string]string
		min, max time.Duration
	}{
		{"Retry-After seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, 7 * time.Second},
		{"Retry-After fraction", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"Retry-After zero", map[string]string{"Retry-After": "0"}, 0, 0},
		{"Retry-After date", map[string]string{"Retry-After": date}, 28 * time.Second, 30 * time.Second},
		{"Retry-After past date", map[string]string{"Retry-After": past}, 0, 0},
		{"retry-after-ms", map[string]string{"retry-after-ms": "1234"}, 1234 * time.Millisecond, 1234 * time.Millisecond},
		{"retry-after-ms wins", map[string]string{"retry-after-ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, 250 * time.Millisecond},
		{"Retry-After capped", map[string]string{"Retry-After": "3600"}, maxRetryAfter, maxRetryAfter},
		{"Retry-After garbage: backoff", map[string]string{"Retry-After": "soon"}, 250 * time.Millisecond, 500 * time.Millisecond},
		{"no header: backoff", nil, 250 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := scripted(t, answer{status: 429, header: tt.header, body: errorBody("rate_limit_error", "slow down")}, answer{status: 200, body: okBody})
			s := &sleeps{}
			if _, err := testCaller(1, s).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil); err != nil {
				t.Fatal(err)
			}
			w := s.got()
			if len(w) != 1 || w[0] < tt.min || w[0] > tt.max {
				t.Errorf("waits %v, want one in [%v, %v]", w, tt.min, tt.max)
			}
		})
	}
}

func TestCallerBackoffGrows(t *testing.T) {
	srv, _ := scripted(t, answer{status: 503, body: "upstream connect error"})
	s := &sleeps{}
	_, err := testCaller(8, s).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
	if err == nil {
		t.Fatal("no error")
	}
	w := s.got()
	if len(w) != 8 {
		t.Fatalf("waits %v, want 8", w)
	}
	for i, d := range w {
		full := min(500*time.Millisecond<<i, maxBackoff)
		if d < full/2 || d > full {
			t.Errorf("wait %d = %v, want in [%v, %v]", i, d, full/2, full)
		}
	}
	// A body that is not the API's error shape is shown as it is.
	if !strings.Contains(err.Error(), "503 Service Unavailable: upstream connect error (after 9 attempts)") {
		t.Errorf("error %q does not show the body", err)
	}
}

func TestCallerShouldRetryHeader(t *testing.T) {
	tests := []struct {
		status   int
		should   string
		requests int64
	}{
		{500, "false", 1},
		{529, "false", 1},
		{400, "true", 2},
		{409, "true", 2},
		{500, "", 2},
		{400, "", 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.status, tt.should), func(t *testing.T) {
			h := map[string]string{}
			if tt.should != "" {
				h["x-should-retry"] = tt.should
			}
			srv, n := scripted(t, answer{status: tt.status, header: h, body: errorBody("api_error", "x")}, answer{status: 200, body: okBody})
			testCaller(2, &sleeps{}).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
			if n.Load() != tt.requests {
				t.Errorf("%d requests, want %d", n.Load(), tt.requests)
			}
		})
	}
}

func TestCallerRetriesDroppedConnection(t *testing.T) {
	srv, n := scripted(t, answer{drop: true}, answer{drop: true}, answer{status: 200, body: okBody})
	s := &sleeps{}
	data, err := testCaller(2, s).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
	if err != nil || string(data) != okBody {
		t.Fatalf("data %s, err %v", data, err)
	}
	if n.Load() != 3 || len(s.got()) != 2 {
		t.Errorf("%d requests, %d waits; want 3 and 2", n.Load(), len(s.got()))
	}

	// Dropped every time: the transport error, with the attempts.
	srv, _ = scripted(t, answer{drop: true})
	_, err = testCaller(1, &sleeps{}).postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
	if err == nil || !strings.Contains(err.Error(), "(after 2 attempts)") || !strings.Contains(err.Error(), "EOF") {
		t.Errorf("err = %v, want the dropped connection after 2 attempts", err)
	}
}

func TestCallerTimeoutPerAttempt(t *testing.T) {
	srv, n := scripted(t, answer{hang: 10 * time.Second}, answer{status: 200, body: okBody})
	c := testCaller(1, &sleeps{})
	c.o.Timeout = 50 * time.Millisecond
	start := time.Now()
	data, err := c.postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
	if err != nil || string(data) != okBody {
		t.Fatalf("data %s, err %v", data, err)
	}
	if n.Load() != 2 || time.Since(start) > 5*time.Second {
		t.Errorf("%d requests in %v; want 2, quickly", n.Load(), time.Since(start))
	}

	srv, _ = scripted(t, answer{hang: 10 * time.Second})
	c = testCaller(0, &sleeps{})
	c.o.Timeout = 50 * time.Millisecond
	_, err = c.postFolded(context.Background(), srv.URL, nil, []byte(`{}`), nil)
	want := fmt.Sprintf("no answer from %s within 0.05 s (agent.timeout_s)", srv.URL)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestCallerContextCanceled(t *testing.T) {
	srv, n := scripted(t, answer{status: 529, body: errorBody("overloaded_error", "Overloaded")})

	// Canceled before the call.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := testCaller(3, &sleeps{}).postFolded(ctx, srv.URL, nil, []byte(`{}`), nil)
	if !errors.Is(err, context.Canceled) || n.Load() != 0 {
		t.Errorf("err = %v after %d requests, want context.Canceled before any", err, n.Load())
	}

	// Canceled while waiting to retry: the cancellation, saying what the
	// last attempt got.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	c := testCaller(3, nil)
	c.o.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		return sleep(ctx, d)
	}
	_, err = c.postFolded(ctx, srv.URL, nil, []byte(`{}`), nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "overloaded_error") {
		t.Errorf("err = %v, want context.Canceled naming the 529", err)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}

	// Canceled during an attempt.
	hang, n2 := scripted(t, answer{hang: 10 * time.Second})
	ctx, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = testCaller(3, &sleeps{}).postFolded(ctx, hang.URL, nil, []byte(`{}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) || n2.Load() != 1 {
		t.Errorf("err = %v after %d requests, want the context's deadline after 1", err, n2.Load())
	}
}

func TestSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("sleep = %v after %v", err, time.Since(start))
	}
	if err := sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("sleep = %v", err)
	}
}

// permanentErr is what a replaying transport returns for a request it has
// no recording of.
type permanentErr struct{}

func (permanentErr) Error() string   { return "no recorded interaction matches" }
func (permanentErr) Permanent() bool { return true }

type failingTransport struct{ n atomic.Int64 }

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.n.Add(1)
	return nil, permanentErr{}
}

func TestCallerDoesNotRetryPermanentErrors(t *testing.T) {
	ft := &failingTransport{}
	s := &sleeps{}
	c := testCaller(3, s)
	c.o.Client = &http.Client{Transport: ft}
	_, err := c.postFolded(context.Background(), "http://127.0.0.1:1/v1/messages", nil, []byte(`{}`), nil)
	var p Permanent
	if !errors.As(err, &p) || ft.n.Load() != 1 || len(s.got()) != 0 {
		t.Errorf("err = %v after %d attempts, %d waits; want the permanent error at once", err, ft.n.Load(), len(s.got()))
	}
}

func TestCallerSendsHeadersAndBody(t *testing.T) {
	var got http.Header
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		io.WriteString(w, okBody)
	}))
	defer srv.Close()
	h := http.Header{}
	h.Set("X-Api-Key", "k")
	if _, err := testCaller(0, &sleeps{}).postFolded(context.Background(), srv.URL, h, []byte(`{"a":1}`), nil); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-Api-Key") != "k" || got.Get("Content-Type") != "application/json" || body != `{"a":1}` {
		t.Errorf("headers %v, body %s", got, body)
	}
	if h.Get("Content-Type") != "" {
		t.Error("post changed the caller's header")
	}
}

func TestCallerLongErrorBodyIsCut(t *testing.T) {
	long := strings.Repeat("x", 2000)
	srv, _ := scripted(t, answer{status: 400, body: long})
	_, err := testCaller(0, &sleeps{}).postFolded(context.Background(), srv.URL, nil, nil, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Message != strings.Repeat("x", 500)+"…" {
		t.Errorf("err = %v", err)
	}
}

func TestAPIErrorText(t *testing.T) {
	tests := []struct {
		err  APIError
		want string
	}{
		{APIError{Provider: "anthropic", Status: 400, Type: "invalid_request_error", Message: "max_tokens: Field required", Attempts: 1},
			"anthropic answered 400 Bad Request: invalid_request_error: max_tokens: Field required"},
		{APIError{Provider: "anthropic", Status: 529, Type: "overloaded_error", Message: "Overloaded", Attempts: 4},
			"anthropic answered 529 Overloaded: overloaded_error: Overloaded (after 4 attempts)"},
		{APIError{Provider: "openai", Status: 599, Message: "odd"}, "openai answered 599: odd"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
