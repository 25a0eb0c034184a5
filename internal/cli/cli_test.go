package cli_test

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script from the actual output")

// TestMain makes the test binary double as the dryfire command, so that
// scripts run it as a real process: `dryfire` exits with dryfire's code;
// `dryfire-exit` prints "exit N" as its last line of standard output and
// exits 0, so a script can assert the exact code (`! exec` cannot tell 1
// from 2).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"dryfire": func() {
			os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"dryfire-exit": func() {
			code := cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			fmt.Printf("exit %d\n", code)
		},
	})
}

// repoRoot is the module root, where README.md and examples/ are.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestScript runs testdata/script/*.txtar. $REPO is the repository root:
// `cd $REPO` runs the examples with the paths the docs show.
func TestScript(t *testing.T) {
	root := repoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", root)
			e.Setenv("NO_COLOR", "")
			// Under -race, a process sleeps a second at exit by default
			// (atexit_sleep_ms): with dozens of commands, minutes.
			e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsonsummary": cmdJSONSummary,
			"junit":       cmdJUnit,
			"waitgrep":    cmdWaitGrep,
			"doc":         cmdDoc,
			"fakemodel":   cmdFakeModel,
		},
	})
}

// waitgrep FILE RE polls FILE until it matches RE, for up to 60 s: a
// background command (run --watch) has done its next step.
func cmdWaitGrep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitgrep FILE RE")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, _ := os.ReadFile(ts.MkAbs(args[0]))
		if re.Match(data) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("after 60 s, %s does not match %s:\n%s", args[0], args[1], data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// doc PAGE MARKER FILE writes the fenced block of PAGE (a page of the
// repository's docs, relative to its root: README.md, docs/ci.md) that
// has a line starting with MARKER to FILE. When MARKER is a "$ command"
// line, the block's lines after it are written (the command's output);
// otherwise the whole block is.
func cmdDoc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: doc PAGE MARKER FILE")
	}
	block, err := docBlock(filepath.Join(ts.Getenv("REPO"), args[0]), args[1])
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(block), 0o644))
}

func docBlock(path, marker string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var block []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if in {
				for i, l := range block {
					if strings.HasPrefix(l, marker) {
						if strings.HasPrefix(marker, "$ ") {
							block = block[i+1:]
						}
						return strings.Join(block, "\n") + "\n", nil
					}
				}
			}
			in, block = !in, nil
			continue
		}
		if in {
			block = append(block, line)
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no fenced block in %s has a line starting with %q", path, marker)
}

// jsonsummary FILE PASSED FAILED ERROR SKIPPED checks that FILE is a JSON
// report with that summary, and that its cases add up to it.
func cmdJSONSummary(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: jsonsummary FILE PASSED FAILED ERROR SKIPPED")
	}
	var rep struct {
		Cases []struct {
			Status string `json:"status"`
		} `json:"cases"`
		Summary map[string]json.RawMessage `json:"summary"`
	}
	data := ts.ReadFile(args[0])
	if err := json.Unmarshal([]byte(data), &rep); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[0], err)
	}
	want := fmt.Sprintf("passed=%s failed=%s error=%s skipped=%s", args[1], args[2], args[3], args[4])
	got := fmt.Sprintf("passed=%s failed=%s error=%s skipped=%s", rep.Summary["passed"], rep.Summary["failed"], rep.Summary["error"], rep.Summary["skipped"])
	if got != want {
		ts.Fatalf("summary %s, want %s", got, want)
	}
	counted := map[string]int{}
	for _, c := range rep.Cases {
		counted[c.Status]++
	}
	if got := fmt.Sprintf("passed=%d failed=%d error=%d skipped=%d", counted["passed"], counted["failed"], counted["error"], counted["skipped"]); got != want {
		ts.Fatalf("cases add up to %s, want %s", got, want)
	}
}

// junit FILE TESTS FAILURES ERRORS SKIPPED checks that FILE is well-formed
// JUnit XML with those totals.
func cmdJUnit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: junit FILE TESTS FAILURES ERRORS SKIPPED")
	}
	var root struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    string   `xml:"tests,attr"`
		Failures string   `xml:"failures,attr"`
		Errors   string   `xml:"errors,attr"`
		Skipped  string   `xml:"skipped,attr"`
	}
	if err := xml.Unmarshal([]byte(ts.ReadFile(args[0])), &root); err != nil {
		ts.Fatalf("%s is not JUnit XML: %v", args[0], err)
	}
	got := strings.Join([]string{root.Tests, root.Failures, root.Errors, root.Skipped}, " ")
	if want := strings.Join(args[1:], " "); got != want {
		ts.Fatalf("tests failures errors skipped = %s, want %s", got, want)
	}
}
