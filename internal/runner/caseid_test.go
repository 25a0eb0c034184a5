package runner_test

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/report"
)

// A case's URLs hold its id (spec.CaseID), made of its suite and name
// alone: a folder of two suites run whole, filtered, sharded, a suite
// alone or with trials gives every case the same URLs (they held the
// case's place in the run, which shifted with every selection).
func TestCaseURLsAreStable(t *testing.T) {
	dir := t.TempDir()
	suite := func(names ...string) string {
		s := "version: 1\nagent:\n  command: [" + strconv.Quote(agentBinary(t)) + ", env]\ncases:\n"
		for _, n := range names {
			s += "  - name: " + n + "\n    input: hi\n"
		}
		return s
	}
	a := writeSuite(t, dir, "a.dryfire.yaml", suite("refund", "lookup", "escalate"))
	b := writeSuite(t, dir, "b.dryfire.yaml", suite("refund", "greet"))
	both := append(slices.Clone(a), b...)
	urls := func(suites []*spec.Suite, opts runner.Options) map[string]string {
		t.Helper()
		opts.Record, opts.Env = cassette.None, commandEnv()
		rep, err := runner.Run(context.Background(), suites, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range rep.Cases {
			if c.Status != report.Passed {
				t.Fatalf("%s: %s %s", c.Name, c.Status, c.Reason)
			}
			var env map[string]string
			if err := json.Unmarshal([]byte(c.Output), &env); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(env["DRYFIRE_TOOLS_URL"])
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(c.Suite)+" "+c.Name] = u.Path
		}
		return out
	}
	whole := urls(both, runner.Options{})
	want := map[string]string{}
	for _, s := range both {
		for _, c := range s.Cases {
			want[filepath.Base(s.File)+" "+c.Name] = "/cases/" + spec.CaseID(filepath.Base(s.File), c.Name) + "/tools"
		}
	}
	if !mapsEqual(whole, want) {
		t.Fatalf("the whole folder:\n got %v\nwant %v", whole, want)
	}
	check := func(what string, got map[string]string) {
		t.Helper()
		if len(got) == 0 {
			t.Errorf("%s: no case ran", what)
		}
		for k, v := range got {
			if whole[k] != v {
				t.Errorf("%s: %s at %s, %s in the whole run", what, k, v, whole[k])
			}
		}
	}
	check("filtered", urls(both, runner.Options{Filter: regexp.MustCompile("^(greet|escalate)$")}))
	check("b alone", urls(b, runner.Options{}))
	check("concurrently", urls(both, runner.Options{Concurrency: 8}))
	var sharded map[string]string = map[string]string{}
	for i := 1; i <= 2; i++ {
		part := urls(both, runner.Options{Shard: &runner.Shard{Index: i, Count: 2}})
		check("shard "+strconv.Itoa(i)+"/2", part)
		for k, v := range part {
			sharded[k] = v
		}
	}
	if len(sharded) != len(whole) {
		t.Errorf("the shards ran %d cases, the whole run %d", len(sharded), len(whole))
	}
	// Trials: the case's id and the trial's number.
	for k, v := range urls(b, runner.Options{Trials: 2, Filter: regexp.MustCompile("^greet$")}) {
		base := whole[k]
		if !regexp.MustCompile("^" + regexp.QuoteMeta(base[:len(base)-len("/tools")]) + `\.[12]/tools$`).MatchString(v) {
			t.Errorf("a trial of %s: %s, want the case's %s with the trial's number", k, v, base)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
