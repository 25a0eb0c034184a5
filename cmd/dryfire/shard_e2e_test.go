package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// writeShardSuites writes two script suites of n cases each, every
// seventh case failing, and returns their directory.
func writeShardSuites(t *testing.T, dir string, n int) {
	t.Helper()
	for _, name := range []string{"a", "b"} {
		var b strings.Builder
		b.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  lookup: [{return: {ok: true}}]\ncases:\n")
		for i := range n {
			want := "done"
			if i%7 == 3 {
				want = "never"
			}
			fmt.Fprintf(&b, "  - name: %s case %d\n    input: go\n    script:\n      - tool_calls: [{name: lookup, args: {n: %d}}]\n      - text: done %d\n    expect: [{called: lookup}, {output: {contains: %s}}]\n", name, i, i, i, want)
		}
		if err := os.WriteFile(filepath.Join(dir, "suites", name+".dryfire.yaml"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var junitTime = regexp.MustCompile(` time="[^"]*"`)

// Three shards in three processes, merged, are the single run: the same
// JSON (durations aside), the same JUnit (times aside), the same text;
// every case exactly once. Spread by durations, too. Reports that do not
// belong together are refused.
func TestE2EShardsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t, t.TempDir())
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "suites"), 0o755)
	writeShardSuites(t, dir, 30)
	env := cleanEnv()

	code, single, _ := runEnv(t, dir, bin, env, "run", "suites", "--json", "single.json", "--junit", "single.xml")
	if code != 1 || !strings.HasSuffix(single, "\n52 passed, 8 failed\n") {
		t.Fatalf("single run: exit %d\n%s", code, single)
	}
	shards := func(prefix string, extra ...string) []string {
		var wg sync.WaitGroup
		files := make([]string, 3)
		for i := range 3 {
			files[i] = fmt.Sprintf("%s-%d.json", prefix, i+1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				args := append([]string{"run", "suites", "--shard", fmt.Sprintf("%d/3", i+1), "--json", files[i]}, extra...)
				if code, out, errOut := runEnv(t, dir, bin, env, args...); code > 1 || errOut != "" {
					t.Errorf("shard %d: exit %d\n%s%s", i+1, code, out, errOut)
				}
			}()
		}
		wg.Wait()
		return files
	}
	for _, tc := range []struct {
		name  string
		extra []string
	}{{"by hash", nil}, {"by durations", []string{"--durations", "single.json"}}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := strings.ReplaceAll(tc.name, " ", "-")
			files := shards(prefix, tc.extra...)
			counts := []int{}
			seen := map[string]int{}
			for _, f := range files {
				r := readTrialReport(t, filepath.Join(dir, f))
				counts = append(counts, len(r.Cases))
				for _, c := range r.Cases {
					seen[c.Name]++
				}
			}
			if len(seen) != 60 || slices.ContainsFunc(counts, func(n int) bool { return n == 0 }) {
				t.Errorf("shards hold %v cases, %d distinct; want all 60 spread over 3", counts, len(seen))
			}
			for name, n := range seen {
				if n != 1 {
					t.Errorf("%s is in %d shards", name, n)
				}
			}
			t.Logf("%s: cases per shard %v", tc.name, counts)
			// Merged in another order than the shards'.
			args := append([]string{"merge", files[2], files[0], files[1]}, "--json", prefix+".json", "--junit", prefix+".xml")
			code, merged, errOut := runEnv(t, dir, bin, env, args...)
			if code != 1 || errOut != "" {
				t.Fatalf("merge: exit %d\n%s%s", code, merged, errOut)
			}
			if merged != single {
				t.Errorf("merge's text differs from the single run's:\n%s\n---\n%s", merged, single)
			}
			if a, b := stableTrialReport(t, filepath.Join(dir, "single.json")), stableTrialReport(t, filepath.Join(dir, prefix+".json")); a != b {
				t.Errorf("merged JSON differs from the single run's:\n%s\n---\n%s", b, a)
			}
			x1, _ := os.ReadFile(filepath.Join(dir, "single.xml"))
			x2, _ := os.ReadFile(filepath.Join(dir, prefix+".xml"))
			if a, b := junitTime.ReplaceAllString(string(x1), ""), junitTime.ReplaceAllString(string(x2), ""); a != b {
				t.Errorf("merged JUnit differs from the single run's:\n%s\n---\n%s", b, a)
			}
		})
	}

	// Refused: exit 2, a message, nothing written.
	doctor := func(from, to string, edit func(map[string]any)) string {
		data, _ := os.ReadFile(filepath.Join(dir, from))
		var r map[string]any
		json.Unmarshal(data, &r)
		edit(r)
		out, _ := json.Marshal(r)
		os.WriteFile(filepath.Join(dir, to), out, 0o644)
		return to
	}
	otherBuild := doctor("by-hash-3.json", "other-build.json", func(r map[string]any) { r["shard"].(map[string]any)["build"] = "dryfire 0.0.1 (abc, go1.20)" })
	otherSuites := doctor("by-hash-3.json", "other-suites.json", func(r map[string]any) { r["shard"].(map[string]any)["suites"] = "sha256:0123456789abcdef0123" })
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"by-hash-1.json", "by-hash-2.json"}, "dryfire: shard 3/3 missing: give the reports of all 3 shards; nothing merged\n"},
		{[]string{"by-hash-1.json", "by-hash-2.json", "by-hash-2.json"}, "dryfire: by-hash-2.json and by-hash-2.json are both shard 2/3; nothing merged\n"},
		{[]string{"by-hash-1.json", "by-hash-2.json", "single.json"}, "dryfire: single.json is not the report of a shard (dryfire run --shard I/N writes those); only shards of one run merge; nothing merged\n"},
		{[]string{"by-hash-1.json", "by-hash-2.json", otherBuild}, `dryfire: by-hash-1.json and other-build.json were written by different builds of dryfire ("` + "BUILD" + `" vs "dryfire 0.0.1 (abc, go1.20)"); run every shard with the same build; nothing merged` + "\n"},
		{[]string{"by-hash-1.json", "by-hash-2.json", otherSuites}, "dryfire: by-hash-1.json and other-suites.json are of different suites (or cases, trials, pass threshold or seed: suites SUITES vs sha256:0123456789ab); merge the shards of one run; nothing merged\n"},
		{[]string{"by-hash-1.json", "by-hashes-2.json"}, "dryfire: reading the report by-hashes-2.json: open by-hashes-2.json: no such file or directory; nothing merged\n"},
	} {
		code, out, errOut := runEnv(t, dir, bin, env, append([]string{"merge"}, append(tc.args, "--json", "refused.json")...)...)
		var first map[string]map[string]any
		data, _ := os.ReadFile(filepath.Join(dir, "by-hash-1.json"))
		json.Unmarshal(data, &first)
		want := strings.Replace(tc.msg, "BUILD", fmt.Sprint(first["shard"]["build"]), 1)
		want = strings.Replace(want, "SUITES", fmt.Sprint(first["shard"]["suites"])[:19], 1)
		if code != 2 || out != "" || errOut != want {
			t.Errorf("merge %v: exit %d\n%s%s\nwant exit 2 and\n%s", tc.args, code, out, errOut, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "refused.json")); err == nil {
			t.Errorf("merge %v wrote a report", tc.args)
		}
	}
	// A changed suite is another run's.
	writeShardSuites(t, dir, 31)
	if code, out, _ := runEnv(t, dir, bin, env, "run", "suites", "--shard", "3/3", "--json", "changed-3.json"); code != 1 {
		t.Fatalf("changed shard: exit %d\n%s", code, out)
	}
	if code, _, errOut := runEnv(t, dir, bin, env, "merge", "by-hash-1.json", "by-hash-2.json", "changed-3.json"); code != 2 || !strings.Contains(errOut, "are of different suites") {
		t.Errorf("merge with a changed suite: exit %d\n%s", code, errOut)
	}
}
