package toolserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// payServer serves testdata/pay.world.yaml's world (a drill of scenario,
// with overrides as JSON rules of the drill's scope) and returns its URL
// and instance.
func payServer(t *testing.T, scenario, overrides string) (string, *world.Instance) {
	t.Helper()
	w, ds := world.Load("testdata/pay.world.yaml", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	d := world.Drill{Scenario: scenario}
	if overrides != "" {
		var v any
		if err := json.Unmarshal([]byte(overrides), &v); err != nil {
			t.Fatal(err)
		}
		rules, err := w.ParseOverrides(v, world.ScopeDrill)
		if err != nil {
			t.Fatal(err)
		}
		d.Overrides = rules
	}
	in, err := w.New(d)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScope(ScopeOptions{Suite: &spec.Suite{File: "pay.dryfire.yaml"}, World: in})
	hs := startServer(t, New(sc, Options{}))
	return hs.URL, in
}

// apiCall is one request and what should come back.
type apiCall struct {
	method, path, body string
	headers            map[string]string
	status             int
	want               string            // the body, as JSON; "" for none
	contains           string            // or a part of it
	wantHeaders        map[string]string // headers that must be present
}

func (x apiCall) run(t *testing.T, base string) {
	t.Helper()
	req, err := http.NewRequest(x.method, base+x.path, strings.NewReader(x.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range x.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != x.status {
		t.Errorf("%s %s: status %d, want %d: %s", x.method, x.path, resp.StatusCode, x.status, body)
	}
	switch {
	case x.contains != "":
		if !strings.Contains(string(body), x.contains) {
			t.Errorf("%s %s: body %s does not contain %q", x.method, x.path, body, x.contains)
		}
	case x.want == "":
		if len(body) != 0 {
			t.Errorf("%s %s: body %s, want none", x.method, x.path, body)
		}
	default:
		if diff := cmp.Diff(decode(t, x.want), decode(t, string(body))); diff != "" {
			t.Errorf("%s %s: body (-want +got):\n%s", x.method, x.path, diff)
		}
	}
	for k, v := range x.wantHeaders {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s %s: header %s = %q, want %q", x.method, x.path, k, got, v)
		}
	}
}

var (
	asAgent  = map[string]string{"Authorization": "Bearer sk_agent"}
	asReader = map[string]string{"Authorization": "Bearer sk_reader"}
)

func withHeaders(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// Every stage of the call pipeline, reached through the package's own
// routes: the request's parts become arguments, the bearer token the
// actor, the answers the package's statuses and error body.
func TestWorldHTTPPipeline(t *testing.T) {
	base, in := payServer(t, "", "")
	api := base + "/http/payments"
	for _, x := range []apiCall{
		// A success: path parameter, header and body merged; the route's status.
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 500}`, headers: withHeaders(asAgent, "X-Reason", "duplicate"),
			status: 201, want: `{"id": "re_1", "charge": "ch_1", "amount": 500, "reason": "duplicate"}`},
		// Permission: the token's actor may not create refunds.
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 5}`, headers: asReader,
			status: 403, want: `{"error": {"type": "PERMISSION_DENIED", "message": "actor \"reader\" may not call payments/refunds.create", "status": 403, "retry": false}}`},
		// Invalid input: the service's 400, naming the argument's path.
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 0}`, headers: asAgent,
			status: 400, contains: `"message":"the arguments do not match the input schema: at /amount: minimum: got 0, want 1"`},
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 1, "currency": "eur"}`, headers: asAgent,
			status: 400, contains: `"type":"INVALID_INPUT"`},
		// One argument twice with two values.
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 1, "charge": "ch_2"}`, headers: asAgent,
			status: 400, want: `{"error": {"type": "INVALID_REQUEST", "message": "POST /v1/charges/ch_1/refunds: argument \"charge\" is \"ch_1\" in the path and \"ch_2\" in the body; give it once, or the same value", "status": 400, "retry": false}}`},
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `[1]`, headers: asAgent, status: 400, contains: "the body must be a JSON object of arguments, not array"},
		// The same value twice is one argument.
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 7, "charge": "ch_1"}`, headers: asAgent,
			status: 201, want: `{"id": "re_2", "charge": "ch_1", "amount": 7}`},
		// Query parameters, typed by the input schema.
		{method: "GET", path: "/v1/refunds?limit=1", headers: asReader, status: 200, want: `[{"id": "re_1", "charge": "ch_1", "amount": 500, "reason": "duplicate"}]`},
		{method: "GET", path: "/v1/refunds?limit=many", headers: asReader, status: 400, contains: `at /limit: `},
		// A literal segment wins over a parameter.
		{method: "GET", path: "/v1/refunds/pending", headers: asAgent, status: 200, contains: `"re_2"`},
		// A declared error at the package's status.
		{method: "GET", path: "/v1/refunds/re_404", headers: asReader, status: 404,
			want: `{"error": {"type": "NOT_FOUND", "message": "no refund re_404", "status": 404, "retry": false}}`},
		// The budget of three list calls is spent by the fourth (invalid
		// input spends none).
		{method: "GET", path: "/v1/refunds", headers: asReader, status: 200, contains: `"re_1"`},
		{method: "GET", path: "/v1/refunds", headers: asReader, status: 200, contains: `"re_1"`},
		{method: "GET", path: "/v1/refunds", headers: asReader, status: 429, contains: `"type":"BUDGET_EXCEEDED"`},
		// 204 answers no body; the record is gone.
		{method: "DELETE", path: "/v1/refunds/re_2", headers: asAgent, status: 204},
		{method: "DELETE", path: "/v1/refunds/re_2", headers: asAgent, status: 404, contains: "no refund re_2"},
		// No token, or one the package does not know.
		{method: "GET", path: "/v1/refunds/re_1", status: 401, contains: "no bearer token", wantHeaders: map[string]string{"WWW-Authenticate": `Bearer realm="payments"`}},
		{method: "GET", path: "/v1/refunds/re_1", headers: map[string]string{"Authorization": "Bearer sk_live"}, status: 401, contains: "a bearer token this package does not know"},
	} {
		x.run(t, api)
	}
	ev := in.Evidence()
	if len(ev) == 0 || ev[0].HTTP == nil {
		t.Fatalf("no HTTP request in the evidence: %+v", ev)
	}
	if diff := cmp.Diff(&world.HTTPEvidence{Method: "POST", Path: "/v1/charges/ch_1/refunds", Route: "/v1/charges/{charge}/refunds"}, ev[0].HTTP); diff != "" {
		t.Errorf("evidence http (-want +got):\n%s", diff)
	}
	var outcomes []string
	for _, e := range ev {
		outcomes = append(outcomes, e.Actor+" "+e.Operation+" "+e.Outcome)
	}
	want := []string{
		"agent payments/refunds.create behavior",
		"reader payments/refunds.create denied",
		"agent payments/refunds.create invalid",
		"agent payments/refunds.create invalid",
		"agent payments/refunds.create behavior",
		"reader payments/refunds.list behavior",
		"reader payments/refunds.list invalid",
		"agent payments/refunds.pending behavior",
		"reader payments/refunds.get behavior",
		"reader payments/refunds.list behavior",
		"reader payments/refunds.list behavior",
		"reader payments/refunds.list budget",
		"agent payments/refunds.cancel behavior",
		"agent payments/refunds.cancel behavior",
	}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
}

// The Idempotency-Key header is the call's key: a repeated key answers
// the receipt, marked Idempotent-Replayed, and creates nothing.
func TestWorldHTTPIdempotencyKey(t *testing.T) {
	base, in := payServer(t, "", "")
	api := base + "/http/payments"
	key := withHeaders(asAgent, "Idempotency-Key", "k-1")
	first := `{"id": "re_1", "charge": "ch_1", "amount": 5}`
	apiCall{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 5}`, headers: key, status: 201, want: first}.run(t, api)
	apiCall{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 5}`, headers: key, status: 201, want: first,
		wantHeaders: map[string]string{"Idempotent-Replayed": "true"}}.run(t, api)
	ev := in.Evidence()
	if len(ev) != 2 || ev[1].Outcome != world.OutcomeReceipt || ev[1].IdempotencyKey == nil || *ev[1].IdempotencyKey != "k-1" {
		t.Errorf("the second call is not a receipt of k-1: %+v", ev)
	}
	if n := len(in.State()["payments"].(map[string]any)["refunds"].(map[string]any)); n != 1 {
		t.Errorf("%d refunds, want 1", n)
	}
}

// An override's error answers at its code's status (the route's, else the
// package's, else 503 for a retryable one with Retry-After), once; a
// fault fires on every second call.
func TestWorldHTTPOverridesAndFaults(t *testing.T) {
	base, in := payServer(t, "flaky", `[
		{"id": "declined", "operation": "payments/refunds.create", "times": 1, "outcome": {"kind": "error", "code": "CARD_DECLINED", "message": "declined"}},
		{"id": "busy", "operation": "payments/refunds.create", "when": {"arguments": {"amount": 2}}, "times": 1, "outcome": {"kind": "error", "code": "BUSY", "message": "try later"}}
	]`)
	api := base + "/http/payments"
	for _, x := range []apiCall{
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 1}`, headers: asAgent, status: 402,
			want: `{"error": {"type": "CARD_DECLINED", "message": "declined", "status": 402, "retry": false}}`},
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 2}`, headers: asAgent, status: 503,
			want: `{"error": {"type": "BUSY", "message": "try later", "status": 503, "retry": true}}`, wantHeaders: map[string]string{"Retry-After": "2"}},
		{method: "POST", path: "/v1/charges/ch_1/refunds", body: `{"amount": 2}`, headers: asAgent, status: 201, contains: `"re_2"`},
		{method: "GET", path: "/v1/refunds/re_9", headers: asAgent, status: 200, contains: `"ch_9"`},
		{method: "GET", path: "/v1/refunds/re_9", headers: asAgent, status: 503, contains: `"type":"BUSY"`, wantHeaders: map[string]string{"Retry-After": "2"}},
		{method: "GET", path: "/v1/refunds/re_9", headers: asAgent, status: 200, contains: `"ch_9"`},
	} {
		x.run(t, api)
	}
	ev := in.Evidence()
	if ev[0].Override == nil || ev[0].Override.ID != "declined" || ev[1].Override == nil || ev[1].Override.ID != "busy" {
		t.Errorf("overrides not in the evidence: %+v %+v", ev[0].Override, ev[1].Override)
	}
	if ev[4].Fault == nil || *ev[4].Fault != "busy-every-2nd" {
		t.Errorf("fault not in the evidence: %+v", ev[4])
	}
}

// Requests that name no route: 404 naming the closest, 405 with Allow,
// the route list on the base, and the package index.
func TestWorldHTTPRoutes(t *testing.T) {
	base, _ := payServer(t, "", "")
	api := base + "/http/payments"
	for _, x := range []apiCall{
		{method: "GET", path: "/v1/refund/re_1", headers: asAgent, status: 404,
			want: `{"error": {"type": "NOT_FOUND", "message": "no route GET /v1/refund/re_1; the closest is GET /v1/refunds/{id} (payments/refunds.get); GET /http/payments lists every route", "status": 404, "retry": false}}`},
		{method: "POST", path: "/v2/charges/ch_1/refunds", headers: asAgent, status: 404, contains: "the closest is POST /v1/charges/{charge}/refunds (payments/refunds.create)"},
		{method: "PUT", path: "/v1/refunds/re_1", headers: asAgent, status: 405,
			want:        `{"error": {"type": "METHOD_NOT_ALLOWED", "message": "PUT /v1/refunds/re_1: the route allows DELETE, GET", "status": 405, "retry": false}}`,
			wantHeaders: map[string]string{"Allow": "DELETE, GET"}},
		{method: "GET", path: "", status: 200, want: `{"package": "payments", "base_url": "` + api + `", "env": "PAYMENTS_URL", "routes": [
			{"method": "POST", "path": "/v1/charges/{charge}/refunds", "operation": "payments/refunds.create", "tool": "refunds_create"},
			{"method": "POST", "path": "/v1/quotes", "operation": "payments/quotes.create", "tool": "quotes_create"},
			{"method": "GET", "path": "/v1/refunds", "operation": "payments/refunds.list", "tool": "refunds_list"},
			{"method": "GET", "path": "/v1/refunds/pending", "operation": "payments/refunds.pending", "tool": "refunds_pending"},
			{"method": "DELETE", "path": "/v1/refunds/{id}", "operation": "payments/refunds.cancel", "tool": "refunds_cancel"},
			{"method": "GET", "path": "/v1/refunds/{id}", "operation": "payments/refunds.get", "tool": "refunds_get"}]}`},
		{method: "GET", path: "/v1/refunds/re%2F1", headers: asAgent, status: 404, contains: `no refund re/1`},
	} {
		x.run(t, api)
	}
	apiCall{method: "GET", path: "/http", status: 200, want: `{"packages": [{"package": "payments", "base_url": "` + api + `", "env": "PAYMENTS_URL", "routes": 6}]}`}.run(t, base)
	apiCall{method: "GET", path: "/http/ledger/x", status: 404, contains: `this world serves no HTTP API for \"ledger\" (it has no such package); the package APIs are /http/payments`}.run(t, base)
}
