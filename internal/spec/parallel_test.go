package spec

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Checking cases on several workers gives what checking them in order
// gives, byte for byte: diagnostics and suite. The suite has what must be
// done in order among the cut groups: duplicate names across groups and
// rows, an anchor and its alias, nesting too deep twice (reported once),
// a data-file item in the middle of a group, rows with problems.
func TestCheckingInParallelIsCheckingInOrder(t *testing.T) {
	dir := t.TempDir()
	var rows strings.Builder
	for i := range 150 {
		switch {
		case i%17 == 3:
			fmt.Fprintf(&rows, "{\"id\": \"R-%d\"}\n", i) // no name
		case i%23 == 5:
			fmt.Fprintf(&rows, "{\"id\": \"R-%d\", \"name\": %d}\n", i, i) // a number for a name
		case i == 40:
			fmt.Fprintf(&rows, "{\"id\": \"R-%d\", \"name\": \"case 7\"}\n", i) // an inline case's name
		case i == 90:
			fmt.Fprintf(&rows, "{\"id\": %s, \"name\": \"deep row\"}\n", strings.Repeat("[", 250)+strings.Repeat("]", 250))
		default:
			fmt.Fprintf(&rows, "{\"id\": \"R-%d\", \"name\": \"row %d\"}\n", i, i)
		}
	}
	os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(rows.String()), 0o644)
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  lookup: [{return: {ok: true}}]\ncases:\n")
	for i := range 400 {
		switch {
		case i == 130:
			b.WriteString("  - from: rows.jsonl\n    name: \"{{name}}\"\n    input: \"Look up {{id}}\"\n    script: [{tool_calls: [{name: lookup, args: {id: \"{{id}}\"}}]}, {text: done}]\n")
			continue
		case i == 70:
			b.WriteString("  - name: anchored\n    input: hi\n    script: &s [{text: ok}]\n")
			continue
		case i == 80:
			b.WriteString("  - name: aliased\n    input: hi\n    script: *s\n")
			continue
		case i == 150 || i == 310:
			b.WriteString("  - a case that is a string\n") // its index is in the message
			continue
		case i == 200 || i == 260:
			fmt.Fprintf(&b, "  - name: deep %d\n    input: hi\n    script: [{text: ok}]\n    mocks: {lookup: [{return: %s1%s}]}\n", i, strings.Repeat("[", 210), strings.Repeat("]", 210))
			continue
		}
		name := fmt.Sprintf("case %d", i)
		if i%50 == 49 {
			name = "case 7" // a duplicate, in another group
		}
		fmt.Fprintf(&b, "  - name: %s\n    input: Look up A-%d\n    script:\n      - tool_calls: [{name: lookup, args: {id: A-%d}}]\n      - text: done\n", name, i, i)
		switch i % 13 {
		case 4:
			b.WriteString("    expect: [{called: {tool: lookup, times: many}}]\n")
		case 9:
			b.WriteString("    expect: [{output: {contains: done, regex: '('}}]\n")
		case 11:
			b.WriteString("    expect: [{called: {tool: lokup}}]\n")
		}
	}
	file := filepath.Join(dir, "s.dryfire.yaml")
	data := []byte(b.String())
	os.WriteFile(file, data, 0o644)
	if _, _, ok := cutCases(data); !ok {
		t.Fatal("the suite is not cut apart")
	}
	load := func(workers int, discard bool) (string, string) {
		defer func(n int) { checkWorkers = n }(checkWorkers)
		checkWorkers = workers
		s, ds := Parse(file, data, &Options{Root: dir, Discard: discard})
		js, _ := json.Marshal(s)
		return ds.Error(), string(js)
	}
	for _, discard := range []bool{false, true} {
		wantDs, wantS := load(1, discard)
		if n := strings.Count(wantDs, "\n"); n < 40 {
			t.Fatalf("only %d diagnostics:\n%s", n+1, wantDs)
		}
		for _, must := range []string{"duplicate case name", "nesting deeper", "rows.jsonl:", "name must be a string", "cases[299] must be a mapping"} {
			if !strings.Contains(wantDs, must) {
				t.Errorf("no %q in\n%s", must, wantDs)
			}
		}
		if strings.Count(wantDs, "nesting deeper") != 1 {
			t.Errorf("nesting reported %d times", strings.Count(wantDs, "nesting deeper"))
		}
		for _, workers := range []int{2, 3, 8} {
			gotDs, gotS := load(workers, discard)
			if gotDs != wantDs {
				t.Errorf("%d workers, discard %v: diagnostics differ:\n%s\nin order:\n%s", workers, discard, gotDs, wantDs)
			}
			if gotS != wantS {
				t.Errorf("%d workers, discard %v: the suites differ", workers, discard)
			}
		}
	}
}

// Every test of the package that checks data rows compares the planned
// check of each row with the whole check and each row's case with the
// one made node by node, and checks cases on workers however few there
// are (benchmarks do none of it).
func TestMain(m *testing.M) {
	flag.Parse()
	verifyRowPlan = flag.Lookup("test.bench").Value.String() == ""
	if verifyRowPlan {
		parallelFrom = 1 // every test goes through the workers
		verifyInstantiate = compareInstantiate
		verifyFixed = compareFixed
	}
	code := m.Run()
	if rowPlanDiff != "" {
		fmt.Fprintf(os.Stderr, "a row's planned schema check differs from the whole check:\n%s\n", rowPlanDiff)
		code = 1
	}
	if fixedDiff != "" {
		fmt.Fprintf(os.Stderr, "a row's case converted with its fixed parts differs from it converted whole:\n%s\n", fixedDiff)
		code = 1
	}
	if instantiateDiff != "" {
		fmt.Fprintf(os.Stderr, "a row's case differs from the one made node by node:\n%s\n", instantiateDiff)
		code = 1
	}
	os.Exit(code)
}

// A row's planned check finds what the whole check finds, wherever the
// template fills values in: under mocks, sequences, content blocks, checks
// of every kind, the user, and as whole values of any type.
func TestRowPlanIsTheWholeCheck(t *testing.T) {
	dir := t.TempDir()
	values := []string{`"text"`, `""`, `7`, `-1`, `2.5`, `true`, `null`, `[]`, `[1, "a"]`, `{}`, `{"a": 1}`, `"{{x}}"`, `"call"`, `"image"`}
	var rows strings.Builder
	for i, v := range values {
		for j, w := range values {
			fmt.Fprintf(&rows, "{\"n\": \"row %d-%d\", \"v\": %s, \"w\": %s}\n", i, j, v, w)
		}
	}
	os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(rows.String()), 0o644)
	templates := []string{
		"    input: \"{{v}}\"\n    script: [{text: \"{{w}}\"}]\n",
		"    input: hi\n    script: [{tool_calls: [{name: lookup, args: \"{{v}}\", id: \"{{w}}\"}]}, {text: ok}]\n",
		"    input: hi\n    max_turns: \"{{v}}\"\n    trials: \"{{w}}\"\n    script: [{text: ok}]\n",
		"    input: hi\n    script: [{text: ok}]\n    mocks:\n      lookup:\n        - when: {id: \"{{v}}\"}\n          return: \"{{w}}\"\n        - sequence: [{return: \"{{v}}\"}, {error: \"{{w}}\"}]\n        - content: [{type: \"{{v}}\", text: \"{{w}}\"}, {type: image, data: \"{{w}}\", mimeType: \"{{v}}\"}]\n",
		"    input: hi\n    script: [{text: ok}]\n    expect:\n      - called: {tool: \"{{v}}\", with: \"{{w}}\", times: \"{{v}}\"}\n      - output: {contains: \"{{v}}\", regex: \"{{w}}\"}\n      - order: [\"{{v}}\", lookup]\n      - \"{{w}}\"\n      - max_turns: \"{{v}}\"\n",
		"    input: hi\n    user: [\"{{v}}\", {text: \"{{w}}\"}]\n    script: [{text: ok}, {text: \"{{v}}\"}]\n",
		"    input: hi\n    script: \"{{v}}\"\n    expect: \"{{w}}\"\n",
		"    input: hi\n    \"{{v}}\": 1\n    script: [{text: ok, extra: \"{{w}}\"}]\n",
	}
	for i, tmpl := range templates {
		data := []byte("version: 1\nagent: {provider: script}\nmocks:\n  lookup: [{return: {ok: true}}]\ncases:\n  - from: rows.jsonl\n    name: \"{{n}}\"\n" + tmpl)
		file := filepath.Join(dir, fmt.Sprintf("t%d.dryfire.yaml", i))
		var want string
		for _, workers := range []int{1, 2} {
			checkWorkers = workers
			_, ds := Parse(file, data, &Options{Root: dir})
			checkWorkers = 0
			if workers == 1 {
				want = ds.Error()
				if !ds.HasErrors() {
					t.Errorf("template %d: no errors", i)
				}
			} else if ds.Error() != want {
				t.Errorf("template %d: diagnostics differ with 2 workers:\n%s\nin order:\n%s", i, ds.Error(), want)
			}
		}
		if rowPlanDiff != "" {
			t.Fatalf("template %d: %s", i, rowPlanDiff)
		}
	}
}
