package toolserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// A scope that keeps answers (serve's: no record) answers every call as
// one that keeps none, byte for byte, over HTTP and MCP, calls repeated
// or not: pure tools from what it kept, the others (a sequence) afresh.
func TestMemoAnswersAsAfresh(t *testing.T) {
	su := loadSuite(t, "support.dryfire.yaml")
	kept := NewScope(ScopeOptions{Suite: su, NoRecords: true})
	fresh := NewScope(ScopeOptions{Suite: su})
	if !kept.memoOn() || fresh.memoOn() {
		t.Fatalf("memoOn: %v with no record, %v with one", kept.memoOn(), fresh.memoOn())
	}
	hsKept, hsFresh := startServer(t, New(kept, Options{})), startServer(t, New(fresh, Options{}))
	calls := []struct{ tool, body string }{
		{"lookup_order", `{"order_id":"A-991"}`},
		{"lookup_order", ` {"order_id": "A-991"} `},
		{"lookup_order", `{"order_id":"B-1"}`},
		{"lookup_order", `{"order_id":"E-1"}`},
		{"lookup_order", `{"order_id":"Z-1"}`},
		{"issue_refund", `{}`},
		{"ping", ``},
		{"ping", `null`},
		{"ping", `[1]`},
		{"ping", `{"a":`},
		{"lookup_ordr", `{}`},
		{"weather", `{"city":"Rome"}`},
	}
	var got, want []string
	var gotRes, wantRes []tool.Result
	for round := range 3 {
		for _, c := range calls {
			for _, hs := range []string{hsKept.URL, hsFresh.URL} {
				req, _ := http.NewRequest("POST", hs+"/tools/"+c.tool, strings.NewReader(c.body))
				ex := do(t, req)
				line := fmt.Sprintf("round %d %s %s: %d %s", round, c.tool, c.body, ex.status, ex.body)
				if hs == hsKept.URL {
					got = append(got, line)
				} else {
					want = append(want, line)
				}
			}
			// Scope.Call, the way MCP calls answer.
			gotRes = append(gotRes, kept.Call(t.Context(), c.tool, c.body))
			wantRes = append(wantRes, fresh.Call(t.Context(), c.tool, c.body))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-afresh +kept):\n%s", diff)
	}
	if diff := cmp.Diff(wantRes, gotRes); diff != "" {
		t.Errorf("results (-afresh +kept):\n%s", diff)
	}
	if e := kept.memo.lookup("lookup_order", []byte(`{"order_id":"A-991"}`)); e == nil || e.http == nil {
		t.Errorf("lookup_order's answer is not kept: %+v", e)
	}
	if e := kept.memo.lookup("issue_refund", []byte(`{}`)); e != nil {
		t.Errorf("a sequence's answer is kept: %+v", e)
	}
	if e := kept.memo.lookup("ping", []byte(`{"a":`)); e != nil {
		t.Errorf("a refused body's answer is kept: %+v", e)
	}
}

// The memo keeps at most memoEntries answers, none with long arguments.
func TestMemoBounded(t *testing.T) {
	sc := NewScope(ScopeOptions{Suite: loadSuite(t, "support.dryfire.yaml"), NoRecords: true})
	for i := range memoEntries + 10 {
		sc.Call(t.Context(), "lookup_order", fmt.Sprintf(`{"order_id":"X-%d"}`, i))
	}
	long := `{"order_id":"` + strings.Repeat("x", memoKey) + `"}`
	sc.Call(t.Context(), "lookup_order", long)
	if n := len(sc.memo.m); n != memoEntries {
		t.Errorf("%d answers kept, want %d", n, memoEntries)
	}
	if sc.memo.lookup("lookup_order", []byte(long)) != nil {
		t.Error("an answer to long arguments is kept")
	}
}
