package toolrec_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolrec"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func text(s string) toolrec.Answer {
	return toolrec.Answer{Blocks: []any{map[string]any{"type": "text", "text": s}}}
}

func parse(file string, data []byte) (*spec.Suite, yamlpos.Diagnostics) {
	return spec.Parse(file, data, nil)
}

// golden compares got with the file, or writes it with -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs (go test -run %s -update to rewrite it):\n--- got\n%s\n--- want\n%s", file, t.Name(), got, want)
	}
}

// summary is what a merge reports, as the golden of its messages.
func summary(r *toolrec.Result) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "tools declared: %s\n", strings.Join(r.Tools, ", "))
	fmt.Fprintf(&b, "rules added: %d (%d sequences, %d in cases' own mocks); calls already answered: %d\n", r.Rules, r.Sequences, r.CaseRules, r.Known)
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "conflict: %s\n", c)
	}
	for _, f := range r.Failed {
		fmt.Fprintf(&b, "failed: %s\n", f)
	}
	for _, d := range r.Differing {
		fmt.Fprintf(&b, "declared otherwise: %s\n", d)
	}
	return []byte(b.String())
}

func TestMergeKeepsHandWrittenRules(t *testing.T) {
	file := "testdata/merge/handwritten.dryfire.yaml" // as the command line gives it: with / on every OS
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	suite, ds := parse(file, data)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	ex := []toolrec.Exchange{
		{Case: "reads two notes", Tool: "lookup", Args: obj("id", "n-1"), Answer: text("the first note, edited")},
		{Case: "reads two notes", Tool: "lookup", Args: obj("id", "n-2"), Answer: text("note two")},
		{Case: "reads two notes", Tool: "lookup", Args: obj("id", "n-2"), Answer: text("note two, later")},
		{Case: "writes a note", Tool: "write", Args: obj("text", "hello", "at", "2026-12-01T10:04:58Z"), Answer: text(`{"id":1}`)},
		{Case: "writes a note", Tool: "write", Args: obj("text", "hello", "at", "2026-12-01T10:05:00Z"), Answer: text(`{"id":2}`)},
		{Case: "writes a note", Tool: "list", Args: obj(), Answer: text("hello\n")},
		{Case: "lists again", Tool: "list", Args: obj(), Answer: text("hello\nhello\n")},
		{Case: "lists again", Tool: "write", Args: obj("text", "s3cr3t-value-123"), Answer: toolrec.Answer{IsError: true, Blocks: []any{map[string]any{"type": "text", "text": "refused s3cr3t-value-123"}}}},
	}
	o := toolrec.Options{
		Label:   "notes-server",
		Secrets: redact.New([]string{"s3cr3t-value-123"}),
		Parse:   parse,
		Tools: []plan.Tool{
			{Name: "lookup", Description: "Look a note up.", Input: obj("type", "object")},
			{Name: "write", Description: "Write a note.", Input: obj("type", "object", "properties", obj("text", obj("type", "string")))},
			{Name: "list"},
		},
	}
	res, err := toolrec.Merge(file, data, suite, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "merge", "handwritten.merged.yaml"), res.Data)
	golden(t, filepath.Join("testdata", "merge", "handwritten.merged.txt"), summary(res))
	if strings.Contains(string(res.Data), "s3cr3t-value-123") {
		t.Error("the secret reached the merged file")
	}

	// Recorded again, into the merged file: nothing is new.
	suite2, ds := parse(file, res.Data)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	again, err := toolrec.Merge(file, res.Data, suite2, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed() || string(again.Data) != string(res.Data) {
		t.Errorf("a second merge of the same recording changed the file:\n%s", again.Data)
	}
	golden(t, filepath.Join("testdata", "merge", "handwritten.again.txt"), summary(again))
}

// Issue 30, hole 2: a merged file that would not answer a recorded call
// as the upstream did (here a Parse that reads the file otherwise) is
// reported as not to be written; a tool name that is YAML is one key.
func TestMergeOnlyWhatReadsBackAsMeant(t *testing.T) {
	file := "s.dryfire.yaml"
	data := []byte("version: 1\nagent: {provider: script}\ncases:\n  - name: c\n    input: hi\n    script: [{text: ok}]\n")
	suite, ds := parse(file, data)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	name := "x: [{impl: \"subprocess:run\"}]\n  y"
	ex := []toolrec.Exchange{{Case: "c", Tool: name, Args: map[string]any{}, Answer: text("ok")}}
	o := toolrec.Options{Label: "up", Parse: parse, Tools: []plan.Tool{{Name: name}}}
	res, err := toolrec.Merge(file, data, suite, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unwritable || len(res.Conflicts) > 0 || strings.Contains(string(res.Data), "\n  x: [") {
		t.Errorf("unwritable %v, conflicts %v:\n%s", res.Unwritable, res.Conflicts, res.Data)
	}
	o.Parse = func(file string, data []byte) (*spec.Suite, yamlpos.Diagnostics) {
		return parse(file, []byte(strings.ReplaceAll(string(data), "return: ok", "return: other")))
	}
	res, err = toolrec.Merge(file, data, suite, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Unwritable || len(res.Conflicts) != 1 {
		t.Errorf("unwritable %v, conflicts %v", res.Unwritable, res.Conflicts)
	}
}

// A declaration that differs from the upstream's list is named with its
// differences; with Refresh it is replaced by the listed tool (its
// aliases kept, its comments with it), every other line as it was.
func TestMergeRefreshesDeclarations(t *testing.T) {
	file := "testdata/merge/refresh.dryfire.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	suite, ds := parse(file, data)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	schema := func(idType string) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": idType}}, "required": []any{"id"}}
	}
	o := toolrec.Options{Label: "notes-server", Parse: parse, Tools: []plan.Tool{
		{Name: "lookup", Description: "Look a note up.", Input: schema("integer")},
		{Name: "write", Description: "Write a note, with its text.", Input: map[string]any{"type": "object"}},
		{Name: "list", Description: "List the notes."},
	}}
	res, err := toolrec.Merge(file, data, suite, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed() || string(res.Data) != string(data) {
		t.Errorf("without Refresh the file changed:\n%s", res.Data)
	}
	golden(t, filepath.Join("testdata", "merge", "refresh.txt"), summary(res))
	o.Refresh = true
	res, err = toolrec.Merge(file, data, suite, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed() {
		t.Error("with Refresh the file is unchanged")
	}
	golden(t, filepath.Join("testdata", "merge", "refresh.merged.yaml"), res.Data)
	// Refreshed again: nothing differs.
	suite2, ds := parse(file, res.Data)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	again, err := toolrec.Merge(file, res.Data, suite2, nil, o)
	if err != nil || again.Changed() || len(again.Differing) > 0 {
		t.Errorf("refreshed again: %v, changed %v, differing %v", err, again.Changed(), again.Differing)
	}
}

// With Refresh, a recorded rule the upstream now answers otherwise takes
// its new answer (its when, its comment and every other line kept), in
// the suite's mocks and in a case's own; a hand-written rule and a
// recorded sequence stay conflicts. Without Refresh, nothing changes.
func TestMergeRerecordsRecordedRules(t *testing.T) {
	file := "s.dryfire.yaml"
	data := []byte(`version: 1
agent: {provider: script}
mocks:
  lookup:
    # recorded from up, case "c"
    - when: {id: n-1}
      return:
        text: old
        at: 1
    # hand-written
    - when: {id: n-2}
      return: hand
  list:
    # recorded from up, case "c"
    - sequence:
        - return: a
        - return: b
cases:
  - name: c
    input: hi
    script: [{text: ok}]
    mocks:
      write:
        # recorded from up, case "c"
        - error: refused # the old answer
`)
	suite, ds := parse(file, data)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	ex := []toolrec.Exchange{
		{Case: "c", Tool: "lookup", Args: map[string]any{"id": "n-1"}, Answer: text(`{"at":2,"text":"new"}`)},
		{Case: "c", Tool: "lookup", Args: map[string]any{"id": "n-1"}, Answer: text(`{"at":2,"text":"new"}`)},
		{Case: "c", Tool: "lookup", Args: map[string]any{"id": "n-2"}, Answer: text("other")},
		{Case: "c", Tool: "list", Args: map[string]any{}, Answer: text("z")},
		{Case: "c", Tool: "write", Args: map[string]any{}, Answer: text("written")},
	}
	o := toolrec.Options{Label: "up", Parse: parse}
	res, err := toolrec.Merge(file, data, suite, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed() || len(res.Conflicts) != 5 {
		t.Errorf("without Refresh: changed %v, conflicts %q", res.Changed(), res.Conflicts)
	}
	o.Refresh = true
	res, err = toolrec.Merge(file, data, suite, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("      return:\n        text: old\n        at: 1\n", "      return: {at: 2, text: new}\n",
		"        - error: refused # the old answer\n", "        - return: written\n").Replace(string(data))
	if string(res.Data) != want {
		t.Errorf("merged:\n%s\nwant\n%s", res.Data, want)
	}
	var conflicts []string
	for _, c := range res.Conflicts {
		conflicts = append(conflicts, c.Rule)
	}
	if res.Rerecorded != 2 || res.Unwritable || strings.Join(conflicts, " ") != "s.dryfire.yaml:11 s.dryfire.yaml:15" {
		t.Errorf("re-recorded %d, unwritable %v, conflicts %q", res.Rerecorded, res.Unwritable, res.Conflicts)
	}
	// Recorded again into the merged file: the calls are answered as the
	// upstream did.
	suite2, ds := parse(file, res.Data)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	again, err := toolrec.Merge(file, res.Data, suite2, ex, o)
	if err != nil || again.Rerecorded != 0 || again.Known != 3 {
		t.Errorf("again: %v, re-recorded %d, known %d", err, again.Rerecorded, again.Known)
	}
}
