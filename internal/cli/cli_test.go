package cli_test

import (
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dryfire-dev/dryfire/internal/cli"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/test/docblock"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
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
		// [netns]: network namespaces can be made (agent.network: isolated).
		Condition: func(cond string) (bool, error) {
			if cond == "netns" {
				return netjail.Available() == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsonsummary":   cmdJSONSummary,
			"junit":         cmdJUnit,
			"waitgrep":      cmdWaitGrep,
			"doc":           cmdDoc,
			"fakemodel":     cmdFakeModel,
			"fakeproviders": cmdFakeProviders,
			"docappend":     cmdDocAppend,
			"contains":      cmdContains,
			"fakescript":    cmdFakeScript,
			"jsonkeys":      cmdJSONKeys,
			"checks":        cmdChecks,
			"cmpreport":     cmdCmpReport,
			"killresume":    cmdKillResume,
			"journalonce":   cmdJournalOnce,
			"cuttail":       cmdCutTail,
			"flipbyte":      cmdFlipByte,
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
//
// Each OLD=NEW after FILE replaces OLD by NEW in the block: a page's port
// 7777 becomes the port a test server really listens on.
func cmdDoc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: doc PAGE MARKER FILE [OLD=NEW...]")
	}
	block, err := docBlock(filepath.Join(ts.Getenv("REPO"), args[0]), args[1])
	ts.Check(err)
	for _, r := range args[3:] {
		old, new, ok := strings.Cut(r, "=")
		if !ok {
			ts.Fatalf("doc: %q is not OLD=NEW", r)
		}
		block = strings.ReplaceAll(block, old, new)
	}
	ts.Check(os.MkdirAll(filepath.Dir(ts.MkAbs(args[2])), 0o755))
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(block), 0o644))
}

// docappend PAGE MARKER FILE [INDENT] appends the block `doc` would write
// to FILE, each line indented by INDENT spaces: a page's fragment of a
// suite (its mocks:, a check) completes a suite the script began.
func cmdDocAppend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 && len(args) != 4 {
		ts.Fatalf("usage: docappend PAGE MARKER FILE [INDENT]")
	}
	block, err := docBlock(filepath.Join(ts.Getenv("REPO"), args[0]), args[1])
	ts.Check(err)
	if len(args) == 4 {
		n, err := strconv.Atoi(args[3])
		ts.Check(err)
		pad := strings.Repeat(" ", n)
		lines := strings.SplitAfter(block, "\n")
		for i, l := range lines {
			if strings.TrimSpace(l) != "" {
				lines[i] = pad + l
			}
		}
		block = strings.Join(lines, "")
	}
	f, err := os.OpenFile(ts.MkAbs(args[2]), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	ts.Check(err)
	_, err = f.WriteString(block)
	ts.Check(err)
	ts.Check(f.Close())
}

// contains FILE PART: the text of FILE (or stdout, stderr) holds the
// text of the file PART. A line of PART that is only "…" (a page leaving
// lines out) stands for any lines: the pieces between must come in order.
func cmdContains(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: contains FILE PART")
	}
	text, part := ts.ReadFile(args[0]), ts.ReadFile(args[1])
	var pieces []string
	var cur strings.Builder
	for _, l := range strings.SplitAfter(part, "\n") {
		if strings.TrimSpace(l) == "…" {
			pieces = append(pieces, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(l)
	}
	pieces = append(pieces, cur.String())
	rest, ok := text, true
	for _, p := range pieces {
		i := strings.Index(rest, p)
		if i < 0 {
			ok = false
			break
		}
		rest = rest[i+len(p):]
	}
	if ok == neg {
		ts.Fatalf("%s does not hold %s:\n--- %s\n%s--- %s\n%s", args[0], args[1], args[0], text, args[1], part)
	}
}

// jsonkeys PART FILE: every "key": that the text PART (a page's sketch
// of a JSON file, with … for what it leaves out) names is a key of an
// object somewhere in the JSON file FILE.
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonkeys PART FILE")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &v); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[1], err)
	}
	have := docblock.JSONKeys(v)
	n := 0
	for _, k := range docblock.SketchKeys(ts.ReadFile(args[0])) {
		n++
		if !have[k] {
			ts.Fatalf("%s names the key %q, which %s does not have", args[0], k, args[1])
		}
	}
	if n == 0 {
		ts.Fatalf("%s names no key", args[0])
	}
}

// fakescript API FILE starts a fake model API (anthropic, openai or
// openai-responses) whose answers are FILE, a JSON object mapping a
// conversation's first user message to its turns ({"text", "toolcalls":
// [{"name", "args"}]}); $FAKE is its URL.
func cmdFakeScript(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fakescript API FILE")
	}
	var script fakeapi.Script
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &script))
	var fake *fakeapi.Server
	switch args[0] {
	case "anthropic":
		fake = fakeapi.NewAnthropic(script)
	case "openai":
		fake = fakeapi.NewOpenAIChat(script)
	case "openai-responses":
		fake = fakeapi.NewOpenAIResponses(script)
	default:
		ts.Fatalf("fakescript: unknown API %q", args[0])
	}
	ts.Defer(fake.Close)
	ts.Setenv("FAKE", fake.URL)
}

// docBlock is the block `doc` writes.
func docBlock(path, marker string) (string, error) { return docblock.Find(path, marker) }

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
