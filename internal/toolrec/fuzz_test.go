package toolrec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/toolrec"
)

// FuzzMerge merges a fixed recording into any suite the loader accepts:
// the merge never panics, never says it made a file that does not load,
// and only adds to the file: every line of it is still there, in order
// (an empty value, "key: {}", may become "key:").
func FuzzMerge(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "merge", "handwritten.dryfire.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	for _, s := range []string{
		"version: 1\nname: s\nagent: {provider: script}\ncases:\n  - name: c\n    input: x\n    script: [{text: x}]\n",
		"version: 1\nname: s\nagent: {provider: script}\ntools: {}\nmocks: {}\ncases:\n  - name: c\n    input: x\n    mocks: {lookup: []}\n    script: [{text: x}]\n",
		"version: 1\nname: s\nagent: {provider: script}\nmocks:\n  lookup: [{return: x}]\ncases: [{name: c, input: x, script: [{text: x}]}]",
		"version: 1\nname: s\nagent: {provider: script}\nmocks:\n  lookup:\n  - when: {id: n-1}\n    return: x\ncases:\n- name: c\n  input: x\n  script: [{text: x}]\n# the end\n",
		"version: 1\nname: s\nagent: {provider: script}\nmocks:\n  lookup:\n    # recorded from fuzz, case \"c\"\n    - when: {id: n-1}\n      return:\n        a: 1\n  write:\n    # recorded from fuzz, case \"c\"\n    - error: no\ncases:\n  - name: c\n    input: x\n    script: [{text: x}]\n    mocks:\n      write:\n        # recorded from fuzz, case \"c\"\n        - {return: x}\n",
	} {
		f.Add([]byte(s))
	}
	tools := []plan.Tool{{Name: "lookup", Description: "Look up.", Input: map[string]any{"type": "object"}}, {Name: "write"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		suite, ds := parse("f.dryfire.yaml", data)
		if suite == nil || ds.HasErrors() {
			return
		}
		// Calls of no case (dryfire serve of the suite's own rules), then
		// of every case.
		ex := []toolrec.Exchange{{Tool: "lookup", Args: map[string]any{"id": "n-2"}, Answer: text("served")}}
		for _, c := range suite.Cases {
			ex = append(ex,
				toolrec.Exchange{Case: c.Name, Tool: "lookup", Args: map[string]any{"id": "n-1"}, Answer: text("one")},
				toolrec.Exchange{Case: c.Name, Tool: "lookup", Args: map[string]any{"id": "n-1"}, Answer: text("two " + c.Name)},
				toolrec.Exchange{Case: c.Name, Tool: "write", Args: map[string]any{}, Answer: text("{\"ok\":true}")},
			)
		}
		res, err := toolrec.Merge("f.dryfire.yaml", data, suite, ex, toolrec.Options{Label: "fuzz", Tools: tools, Secrets: redact.New(nil), Parse: parse})
		if err != nil {
			if strings.Contains(err.Error(), "a bug") {
				t.Fatalf("%v\n--- input\n%s", err, data)
			}
			return
		}
		if !kept(string(data), string(res.Data)) {
			t.Fatalf("the merge changed what was there:\n--- input\n%s\n--- merged\n%s", data, res.Data)
		}
		// Refreshed, recorded rules may take the new answers: still no
		// panic, and never a merged file that does not load.
		res, err = toolrec.Merge("f.dryfire.yaml", data, suite, ex, toolrec.Options{Label: "fuzz", Tools: tools, Secrets: redact.New(nil), Parse: parse, Refresh: true})
		if err != nil && strings.Contains(err.Error(), "a bug") {
			t.Fatalf("refreshed: %v\n--- input\n%s", err, data)
		}
		if err == nil && res.Unwritable && res.Rerecorded > 0 && len(res.Conflicts) == 0 {
			t.Fatalf("refreshed: unwritable without a conflict\n--- input\n%s", data)
		}
	})
}

// kept says every line of before is in after, in order; a line whose
// value was empty ({}, [], null, ~) may have lost it.
func kept(before, after string) bool {
	al := strings.Split(after, "\n")
	j := 0
	for _, l := range strings.Split(before, "\n") {
		for j < len(al) && al[j] != l && !cleared(l, al[j]) {
			j++
		}
		if j == len(al) {
			return false
		}
		j++
	}
	return true
}

func cleared(orig, now string) bool {
	for _, tok := range []string{"{}", "[]", "null", "~"} {
		if i := strings.Index(orig, ": "+tok); i >= 0 && strings.HasPrefix(now, orig[:i+1]) {
			return true
		}
	}
	return false
}
