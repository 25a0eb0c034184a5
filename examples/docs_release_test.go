package examples_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsReleasingCommands checks the blocks of docs/releasing.md
// against what scripts/release.sh writes (scripts/ci.d/15-release.sh runs
// the release itself): the command is the script's; the package.json
// that installs the tarballs names them as sdk/js/scripts/pack.mjs names
// them; every dist/ file the publishing commands take is one the script's
// header lists.
func TestDocsReleasingCommands(t *testing.T) {
	script, err := os.ReadFile("../scripts/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	header := string(script[:strings.Index(string(script), "set -euo pipefail")])

	run := pageBlock(t, "docs/releasing.md", "scripts/release.sh ")
	if f := strings.Fields(run[0]); len(f) < 2 || f[0] != "scripts/release.sh" || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(f[1]) {
		t.Errorf("the release command is %q; want scripts/release.sh X.Y.Z", run[0])
	}

	var project struct {
		Dependencies, Overrides map[string]string
	}
	if err := json.Unmarshal([]byte(strings.Join(pageBlock(t, "docs/releasing.md", `  "dependencies"`), "\n")), &project); err != nil {
		t.Fatalf("the install example is not JSON: %v", err)
	}
	tarball := regexp.MustCompile(`^file:dist/npm/dryfire(-cli-(darwin|linux|win32)-(arm64|x64))?-\d+\.\d+\.\d+\.tgz$`)
	for name, spec := range project.Dependencies {
		if name != "dryfire" || !tarball.MatchString(spec) {
			t.Errorf("dependency %s: %s; want dryfire from dist/npm", name, spec)
		}
	}
	for name, spec := range project.Overrides {
		if !strings.HasPrefix(name, "@dryfire/cli-") || !tarball.MatchString(spec) || !strings.Contains(spec, "/dryfire-"+strings.TrimPrefix(name, "@dryfire/")+"-") {
			t.Errorf("override %s: %s; want its own tarball from dist/npm", name, spec)
		}
	}

	dist := regexp.MustCompile(`dist/([a-z]+/)?([A-Za-z_.*-]+)`)
	for _, line := range pageBlock(t, "docs/releasing.md", "gh release create") {
		for _, m := range dist.FindAllStringSubmatch(line, -1) {
			dir, file := m[1], m[2]
			want := "dist/" + dir
			switch {
			case dir == "" && strings.HasPrefix(file, "*"):
				want = strings.TrimPrefix(file, "*") // an archive's kind: .tar.gz, .zip
			case dir == "":
				want = "dist/" + file
			}
			if !strings.Contains(header, want) {
				t.Errorf("%q publishes %s, which scripts/release.sh does not say it writes (%s)", line, m[0], want)
			}
		}
	}
}
