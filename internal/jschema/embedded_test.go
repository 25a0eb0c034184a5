package jschema_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/schema"
)

// The schemas shipped in the binary compile in full, with the bound on
// their size: Embedded may compile them late because this holds.
func TestEmbeddedSchemasCompile(t *testing.T) {
	for _, s := range []struct {
		name, url string
		data      []byte
		fragments []string
	}{
		{"suite", schema.SuiteURL, schema.Suite, []string{"", "#/$defs/case"}},
		{"world", schema.WorldURL, schema.World, []string{""}},
	} {
		raw, err := value.Parse(s.data)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if _, err := jschema.CompileFragments(raw, s.url, s.fragments); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
}

// An embedded schema compiles its validator only for a value its quick
// tree cannot pass, and then says what the eagerly compiled one says.
func TestEmbeddedCompilesOnFirstNeed(t *testing.T) {
	raw, err := value.Parse(schema.Suite)
	if err != nil {
		t.Fatal(err)
	}
	late := jschema.Embedded(raw, schema.SuiteURL, "")
	eager, err := jschema.Compile(raw, schema.SuiteURL)
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]any{"version": json.Number("1"), "agent": map[string]any{"provider": "script"}, "cases": []any{map[string]any{"name": "c", "input": "x", "script": []any{map[string]any{"text": "ok"}}}}}
	if jschema.QuickVerdict(late, good) != "yes" {
		t.Fatalf("the quick tree does not pass a plain suite: %s", jschema.QuickVerdict(late, good))
	}
	if leaves := late.Validate(good); leaves != nil {
		t.Fatalf("a plain suite: %v", leaves)
	}
	if jschema.ValidatorCompiled(late) {
		t.Fatal("a value the quick tree passed compiled the validator")
	}
	bad := map[string]any{"version": json.Number("1"), "agent": map[string]any{"provider": "script"}, "cases": []any{map[string]any{"name": json.Number("3"), "inputs": "x"}}}
	got, want := late.Validate(bad), eager.Validate(bad)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("late %v\neager %v", got, want)
	}
	if !jschema.ValidatorCompiled(late) {
		t.Fatal("an invalid value left the validator uncompiled")
	}
}

// The validator's meta-schemas are compiled on first use, one draft at a
// time (internal/jsonschema, FORK.md): schemas of every draft compiled
// and applied at once, from many goroutines, each still judged by its own
// draft (run with -race).
func TestDraftsCompileConcurrently(t *testing.T) {
	drafts := []string{
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(drafts))
	for range 4 {
		for _, d := range drafts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// exclusiveMinimum is a boolean in draft 4, a number after it.
				sch := map[string]any{"$schema": d, "type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": json.Number("3")}}, "required": []any{"n"}}
				s, err := jschema.Compile(sch, "")
				if err != nil {
					errs <- fmt.Errorf("%s: %v", d, err)
					return
				}
				if l := s.Validate(map[string]any{"n": json.Number("4")}); len(l) != 1 {
					errs <- fmt.Errorf("%s: n: 4 gave %v, want one failure", d, l)
				}
				bad := map[string]any{"$schema": d, "exclusiveMinimum": "x"}
				if _, err := jschema.Compile(bad, ""); err == nil {
					errs <- fmt.Errorf("%s: a string exclusiveMinimum compiled", d)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
