package jschema

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// With JSON_SCHEMA_TEST_SUITE set to a checkout's tests/draft2020-12
// directory (github.com/json-schema-org/JSON-Schema-Test-Suite), every
// test of every file there is put to the quick tree: where it is sure, it
// must agree with the validator (and with the suite's expectation where
// the validator does).
func TestQuickAgreesOnTheJSONSchemaTestSuite(t *testing.T) {
	dir := os.Getenv("JSON_SCHEMA_TEST_SUITE")
	if dir == "" {
		t.Skip("JSON_SCHEMA_TEST_SUITE is not set")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s", dir)
	}
	var sure, unsureN, skipped int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		groups, err := value.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups.([]any) {
			g := g.(map[string]any)
			s, err := Compile(g["schema"], "")
			if err != nil || s.q == nil {
				skipped++
				continue
			}
			for _, tc := range g["tests"].([]any) {
				tc := tc.(map[string]any)
				got := s.q.check(tc["data"], 0)
				valid := len(s.validate(tc["data"])) == 0
				if got == unsure {
					unsureN++
					continue
				}
				sure++
				if (got == yes) != valid {
					t.Errorf("%s: %s: %s: quick %s, validator valid=%v", filepath.Base(f), g["description"], tc["description"], got, valid)
				}
			}
		}
	}
	t.Logf("sure %d, unsure %d, schemas without a quick tree %d", sure, unsureN, skipped)
}
