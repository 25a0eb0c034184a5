package openapi

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/world"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// Each document of testdata imports into NAME.world.yaml.golden,
// NAME.star.golden and NAME.warnings.golden (-update rewrites them).
func TestImportGolden(t *testing.T) {
	for _, name := range []string{"petstore-expanded", "features"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.ToSlash(filepath.Join("testdata", name+".yaml"))
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			pkg := strings.Split(name, "-")[0]
			res, ds := Import(file, data, Options{Package: pkg})
			if res == nil {
				t.Fatalf("not imported: %v", ds)
			}
			// What the import writes loads clean: no error, no warning.
			w, wds := world.Parse(pkg+".world.yaml", res.World, &world.LoadOptions{ReadFile: func(string) ([]byte, error) { return res.Module, nil }})
			if w == nil || len(wds) > 0 {
				t.Errorf("the imported world does not load clean: %v", wds)
			}
			var warnings strings.Builder
			for _, d := range res.Warnings {
				warnings.WriteString(d.String() + "\n")
			}
			for ext, got := range map[string]string{".world.yaml": string(res.World), ".star": string(res.Module), ".warnings": warnings.String()} {
				golden := filepath.Join("testdata", name+ext+".golden")
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", golden, diff)
				}
			}
		})
	}
}

// Documents that are not OpenAPI 3 are refused with a positioned error.
func TestImportRefuses(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"swagger: '2.0'\npaths: {}\n", "x.yaml:1:10: swagger 2.0 is OpenAPI 2; convert it to OpenAPI 3 first"},
		{"openapi: 4.0.0\npaths: {}\n", `x.yaml:1:1: openapi "4.0.0": want an OpenAPI 3.0 or 3.1 document`},
		{"openapi: 3.0.3\npaths: {/a: {head: {}}}\n", "x.yaml:2:1: the document has no operation to import"},
		{"- 1\n", "x.yaml:1:1: an OpenAPI document is a mapping, not a list"},
		{"", "x.yaml:1:1: empty file"},
	} {
		res, ds := Import("x.yaml", []byte(tt.doc), Options{Package: "p"})
		if res != nil || len(ds) == 0 || !strings.HasPrefix(ds[0].String(), tt.want) {
			t.Errorf("%q: got %v, want an error beginning %q", tt.doc, ds, tt.want)
		}
	}
}

// References that fan out (each schema uses the next one twice) stop at
// MaxSchemaNodes with a warning instead of growing without end.
func TestImportBoundsSchemas(t *testing.T) {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\npaths:\n  /a:\n    get:\n      operationId: a\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/S0'}}}}\ncomponents:\n  schemas:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "    S%d: {type: object, properties: {l: {$ref: '#/components/schemas/S%d'}, r: {$ref: '#/components/schemas/S%d'}}}\n", i, i+1, i+1)
	}
	b.WriteString("    S40: {type: string}\n")
	start := time.Now()
	res, ds := Import("fan.yaml", []byte(b.String()), Options{Package: "p"})
	if res == nil {
		t.Fatal(ds)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("import took %v", d)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w.Message, "MaxSchemaNodes")
	}
	if !found {
		t.Errorf("no warning of the bound: %v", res.Warnings)
	}
}

// A $ref that names a missing key, or one under a value that is not a
// mapping, names nothing: a warning, and the schema is left out.
func TestImportRefNamesNothing(t *testing.T) {
	for _, ref := range []string{"#/components/schemas/Nope", "#/components/schemas/S/type/x", "#/components/schemas/S/enum/0"} {
		doc := "openapi: 3.0.3\npaths:\n  /a:\n    get:\n      operationId: a\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {$ref: '" + ref + "'}}}}\ncomponents:\n  schemas:\n    S: {type: string, enum: [x]}\n"
		res, ds := Import("ref.yaml", []byte(doc), Options{Package: "p"})
		if res == nil {
			t.Fatal(ds)
		}
		found := false
		for _, w := range res.Warnings {
			found = found || strings.Contains(w.Message, `$ref "`+ref+`" names nothing in the document`)
		}
		if !found {
			t.Errorf("%s: no warning that it names nothing: %v", ref, res.Warnings)
		}
	}
}
