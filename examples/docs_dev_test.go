package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goTestFlags are go test's own flags (and the build flags the page
// uses); any other flag of a go test line must be one the package's tests
// define.
var goTestFlags = map[string]bool{"run": true, "fuzz": true, "fuzztime": true, "bench": true, "v": true, "race": true, "count": true, "timeout": true, "short": true, "args": true}

// TestDocsDevelopmentCommands checks the commands of docs/development.md
// without running them (they are the whole suite, fuzzers, benchmarks and
// re-recordings): every path they name exists; for each go test line,
// each package has tests, the -run/-fuzz/-bench pattern matches a function
// of its tests, and every other flag, or a VAR=1 before it, is one its
// tests read.
func TestDocsDevelopmentCommands(t *testing.T) {
	lines := pageBlock(t, "docs/development.md", "scripts/test.sh")
	word := regexp.MustCompile(`'[^']*'|\S+`)
	for _, line := range lines {
		cmd, _, _ := strings.Cut(line, " #")
		cmd = strings.Trim(strings.TrimSpace(cmd), "()")
		dir := ".."
		for _, part := range strings.Split(cmd, "&&") {
			args := word.FindAllString(strings.TrimSpace(part), -1)
			if len(args) == 2 && args[0] == "cd" {
				dir = filepath.Join(dir, args[1])
				continue
			}
			checkDevCommand(t, line, dir, args)
		}
	}
}

// checkDevCommand checks one command of a line, run in dir.
func checkDevCommand(t *testing.T, line, dir string, args []string) {
	t.Helper()
	var env []string
	for len(args) > 0 && strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "-") {
		env = append(env, strings.SplitN(args[0], "=", 2)[0])
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	if args[0] != "go" || len(args) < 2 || args[1] != "test" {
		// A script, a node program, go run FILE: the paths it names exist.
		for _, a := range args {
			if strings.Contains(a, "/") && !strings.Contains(a, "$") && !strings.HasPrefix(a, "-") {
				if _, err := os.Stat(filepath.Join(dir, a)); err != nil {
					t.Errorf("%q: %v", line, err)
				}
			}
		}
		if args[0] == "go" && args[1] == "run" {
			src, _ := os.ReadFile(filepath.Join(dir, args[2]))
			for _, a := range args[3:] {
				if strings.HasPrefix(a, "-") && !strings.Contains(string(src), `"`+strings.TrimLeft(a, "-")+`"`) {
					t.Errorf("%q: %s defines no flag %s", line, args[2], a)
				}
			}
		}
		return
	}
	var pkgs, flags []string
	patterns := map[string]string{}
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "./..." || a == ".":
			pkgs = append(pkgs, a)
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, a)
		case strings.HasPrefix(a, "-"):
			name := strings.TrimLeft(a, "-")
			switch name {
			case "run", "fuzz", "bench", "fuzztime":
				i++
				patterns[name] = strings.Trim(args[i], "'")
			default:
				if !goTestFlags[name] {
					flags = append(flags, name)
				}
			}
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	for _, pkg := range pkgs {
		if pkg == "./..." {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, pkg, "*_test.go"))
		if len(files) == 0 {
			t.Errorf("%q: %s has no tests", line, pkg)
			continue
		}
		var src strings.Builder
		for _, f := range files {
			data, _ := os.ReadFile(f)
			src.Write(data)
		}
		for kind, pattern := range patterns {
			if kind == "fuzztime" || pattern == "xxx" || pattern == "." {
				continue
			}
			re, err := regexp.Compile(pattern)
			if err != nil {
				t.Errorf("%q: -%s %s: %v", line, kind, pattern, err)
				continue
			}
			found := false
			for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w+)\(`).FindAllStringSubmatch(src.String(), -1) {
				found = found || re.MatchString(m[1])
			}
			if !found {
				t.Errorf("%q: no function of %s's tests matches -%s %s", line, pkg, kind, pattern)
			}
		}
		for _, f := range append(flags, env...) {
			if !strings.Contains(src.String(), `"`+f+`"`) {
				t.Errorf("%q: the tests of %s read no %s", line, pkg, f)
			}
		}
	}
}
