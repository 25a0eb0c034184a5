package mock

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// benchSet compiles n rules of one tool, each guarded by three keys. Every
// rule agrees with the call on two keys (a number and a string) and only
// the last agrees on the third, so each miss does the full comparison work
// before failing.
func benchSet(b *testing.B, n int) *Set {
	b.Helper()
	var src strings.Builder
	src.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  create_order:\n")
	for i := range n {
		fmt.Fprintf(&src, "    - when: {amount: 100, currency: EUR, sku: SKU-%d}\n      return: {ok: true, rule: %d}\n", i, i)
	}
	src.WriteString("cases:\n  - name: c\n    input: hi\n    script: [{text: done}]\n")
	s, ds := spec.Parse("bench.dryfire.yaml", []byte(src.String()), nil)
	if ds.HasErrors() {
		b.Fatal(ds)
	}
	return Compile(s)
}

func benchArgs(n int) string {
	return fmt.Sprintf(`{"amount":100,"currency":"EUR","sku":"SKU-%d","note":"deliver before noon"}`, n-1)
}

// BenchmarkMatch is rule selection alone: the arguments parsed once, the
// matching rule last of n. The rules differ by a string (sku), so the
// list is indexed by it (index.go).
func BenchmarkMatch(b *testing.B) {
	benchMatch(b, benchSet, benchArgs)
}

// BenchmarkMatchNumber is the same with rules that differ by a number
// (amount): indexed by its value.
func BenchmarkMatchNumber(b *testing.B) {
	benchMatch(b, func(b *testing.B, n int) *Set {
		return benchRules(b, n, "{amount: %d, currency: EUR, sku: SKU-1}", true)
	}, func(n int) string {
		return fmt.Sprintf(`{"amount":%d,"currency":"EUR","sku":"SKU-1","note":"deliver before noon"}`, n-1)
	})
}

// BenchmarkMatchScan is the same with rules that differ inside a nested
// value, which no index keys on: the first-match scan.
func BenchmarkMatchScan(b *testing.B) {
	benchMatch(b, func(b *testing.B, n int) *Set {
		return benchRules(b, n, "{order: {amount: %d}, currency: EUR, sku: SKU-1}", false)
	}, func(n int) string {
		return fmt.Sprintf(`{"order":{"amount":%d},"currency":"EUR","sku":"SKU-1","note":"deliver before noon"}`, n-1)
	})
}

// benchRules compiles n rules of create_order, rule i guarded by when
// (with i for its %d); indexed says whether the list must be indexed.
func benchRules(b *testing.B, n int, when string, indexed bool) *Set {
	b.Helper()
	var src strings.Builder
	src.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  create_order:\n")
	for i := range n {
		fmt.Fprintf(&src, "    - when: "+when+"\n      return: {ok: true, rule: %d}\n", i, i)
	}
	src.WriteString("cases:\n  - name: c\n    input: hi\n    script: [{text: done}]\n")
	s, ds := spec.Parse("bench.dryfire.yaml", []byte(src.String()), nil)
	if ds.HasErrors() {
		b.Fatal(ds)
	}
	set := Compile(s)
	if got := set.tools["create_order"].index != nil; got != indexed {
		b.Fatalf("indexed: %v, want %v", got, indexed)
	}
	return set
}

func benchMatch(b *testing.B, mk func(*testing.B, int) *Set, mkArgs func(int) string) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			set := mk(b, n)
			args, err := value.Parse([]byte(mkArgs(n)))
			if err != nil {
				b.Fatal(err)
			}
			want := set.tools["create_order"].rules[n-1]
			b.ReportAllocs()
			for b.Loop() {
				if set.match("create_order", args) != want {
					b.Fatal("wrong rule")
				}
			}
		})
	}
}

// BenchmarkSessionCall is a whole call: parse the JSON arguments, select
// the rule, and record the call (tool.Recorder over a Session, as every
// caller uses it), with the matching rule last of 10.
func BenchmarkSessionCall(b *testing.B) {
	set := benchSet(b, 10)
	c := tool.Call{ID: "call_1", Name: "create_order", Args: benchArgs(10), Turn: 1}
	ctx := context.Background()
	s := tool.NewRecorder(NewSession(set, nil), tool.RecorderOptions{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i++; i%1024 == 0 {
			// keep the record from growing without bound
			s = tool.NewRecorder(NewSession(set, nil), tool.RecorderOptions{})
		}
		if r := s.Call(ctx, c); r.Outcome != tool.Return {
			b.Fatal(r.Content)
		}
	}
}
