package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

// TestDocsCommandList: each line of the command list of docs/running.md
// names a command that exists, and every --flag the line names is one of
// that command's.
func TestDocsCommandList(t *testing.T) {
	block, err := docBlock(filepath.Join(repoRoot(t), "docs/running.md"), "dryfire init [DIR]")
	if err != nil {
		t.Fatal(err)
	}
	word := regexp.MustCompile(`^[a-z][a-z-]*$`)
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		synopsis, _, _ := strings.Cut(line, "  ") // then what it does
		words := strings.Fields(synopsis)
		if len(words) == 0 || words[0] != "dryfire" {
			t.Errorf("%q: not a dryfire command", line)
			continue
		}
		var path []string
		for _, w := range words[1:] {
			if !word.MatchString(w) {
				break
			}
			path = append(path, w)
		}
		var out, errOut strings.Builder
		if code := cli.Main(append(path, "--help"), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Errorf("%q: dryfire %s --help: exit %d\n%s", line, strings.Join(path, " "), code, errOut.String())
			continue
		}
		help := out.String() + errOut.String()
		if !strings.Contains(help, "dryfire "+strings.Join(path, " ")) {
			t.Errorf("%q: the help of dryfire %s does not name it:\n%s", line, strings.Join(path, " "), help)
		}
		for _, f := range flag.FindAllString(line, -1) {
			if !regexp.MustCompile(`(?m)` + regexp.QuoteMeta(f) + `\b`).MatchString(help) {
				t.Errorf("%q: dryfire %s has no flag %s", line, strings.Join(path, " "), f)
			}
		}
		n++
	}
	if n < 10 {
		t.Errorf("the command list has %d commands", n)
	}
}
