// Package hostile runs dryfire on a corpus of hostile inputs (testdata/*.txtar):
// each item must end, under a memory cap and a time cap, with a clear
// message and its exit status as its golden says; a fatal error, a panic
// or a hang fails the test.
package hostile_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want section of every item")

const (
	// memoryCap is each run's RLIMIT_DATA: the memory it may map writable.
	memoryCap = 1 << 30
	// timeCap bounds each run.
	timeCap = 20 * time.Second
)

// An item is a txtar archive: its files are written to a fresh directory
// (expanded as templates delimited by {% %}: {%repeat N "s"%}, {%range%},
// so that a big input stays a small file),
// "cmd" holds dryfire's arguments (one line, split at spaces), "env"
// optional KEY=VALUE lines, "want" the exit status line, stdout and
// stderr ($WORK for the directory).
func TestHostileCorpus(t *testing.T) {
	items, _ := filepath.Glob("testdata/*.txtar")
	if len(items) == 0 {
		t.Fatal("no items")
	}
	bin := buildDryfire(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prlimit (util-linux) is needed for the memory cap")
		}
		t.Log("no prlimit: runs without a memory cap")
	}
	for _, item := range items {
		t.Run(strings.TrimSuffix(filepath.Base(item), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runItem(t, item, bin, prlimit)
		})
	}
}

func buildDryfire(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "dryfire")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/dryfire-dev/dryfire/cmd/dryfire")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building dryfire: %v\n%s", err, out)
	}
	return bin
}

func runItem(t *testing.T, item, bin, prlimit string) {
	ar, err := txtar.ParseFile(item)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var args, env []string
	wantAt := -1
	for i, f := range ar.Files {
		switch f.Name {
		case "cmd":
			args = strings.Fields(string(f.Data))
		case "env":
			env = strings.Fields(string(f.Data))
		case "want":
			wantAt = i
		default:
			p := filepath.Join(dir, f.Name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, expand(t, f.Data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(args) == 0 {
		t.Fatal("no cmd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeCap)
	defer cancel()
	argv := append([]string{bin}, args...)
	if prlimit != "" {
		argv = append([]string{prlimit, "--data=" + itoa(memoryCap), "--"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "NO_COLOR=1", "CI=true"}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("hang: no end within %s", timeCap)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if code < 0 {
			t.Fatalf("killed: %v\n%s", err, stderr.String())
		}
	} else if err != nil {
		t.Fatal(err)
	}
	all := stdout.String() + stderr.String()
	for _, bad := range []string{"panic:", "fatal error:", "goroutine ", "runtime error"} {
		if strings.Contains(all, bad) {
			t.Fatalf("%s in the output:\n%s", bad, all)
		}
	}
	if code > 3 {
		t.Errorf("exit %d", code)
	}
	got := "exit " + itoa(code) + "\n-- stdout\n" + normalize(stdout.String(), dir) + "-- stderr\n" + normalize(stderr.String(), dir)
	if *update {
		if wantAt < 0 {
			ar.Files = append(ar.Files, txtar.File{Name: "want"})
			wantAt = len(ar.Files) - 1
		}
		ar.Files[wantAt].Data = []byte(got)
		if err := os.WriteFile(item, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if wantAt < 0 {
		t.Fatal("no want section: run with -update and review it")
	}
	if want := string(ar.Files[wantAt].Data); got != want {
		t.Errorf("output differs (took %v)\n--- got\n%s--- want\n%s", took, got, want)
	}
}

// normalize makes an output comparable: the item's directory is $WORK,
// durations are 0s.
func normalize(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "$WORK")
	s = durations.ReplaceAllString(s, "${1}0")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func itoa(n int) string { return strconvItoa(n) }
