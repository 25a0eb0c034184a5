package program

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// On Windows there is no /bin/sh: the programs of these tests are this
// test binary, told what to do by $DRYFIRE_PROGRAM_HELPER
// (TestHelperProgram). scripts/ci.d/70-wine.sh runs them under Wine.
func self(t *testing.T, mode string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Argv:    []string{exe, "-test.run=^TestHelperProgram$"},
		Env:     append(os.Environ(), "DRYFIRE_PROGRAM_HELPER="+mode, "X=x"),
		Timeout: time.Minute,
	}
}

// TestHelperProgram is the program of the tests below when run by them.
func TestHelperProgram(t *testing.T) {
	mode := os.Getenv("DRYFIRE_PROGRAM_HELPER")
	if mode == "" {
		return
	}
	switch mode {
	case "print":
		fmt.Print("a\nb\r\n")
	case "cat":
		io.Copy(os.Stdout, os.Stdin)
	case "env":
		wd, _ := os.Getwd()
		fmt.Println(os.Getenv("X"), filepath.Base(wd))
	case "fail":
		fmt.Println("out")
		fmt.Fprintln(os.Stderr, "err")
		os.Exit(3)
	case "sleep":
		time.Sleep(30 * time.Second)
	case "linger": // past the wait delay, then it leaves a mark, unless killed
		time.Sleep(waitDelay + 2*time.Second)
		os.WriteFile(os.Getenv("DRYFIRE_PROGRAM_MARK"), []byte("still running"), 0o644)
	case "leave":
		exe, _ := os.Executable()
		child := exec.Command(exe, "-test.run=^TestHelperProgram$")
		child.Env = append(os.Environ(), "DRYFIRE_PROGRAM_HELPER=linger")
		child.Dir = os.TempDir()
		child.Stdout = os.Stdout // it holds the output open
		child.Start()
		fmt.Println("started")
	case "talk":
		lines := bufio.NewScanner(os.Stdin)
		for lines.Scan() {
			fmt.Println("got " + lines.Text())
		}
	}
	os.Exit(0)
}

func TestRunEndsWindows(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		mode    string
		stdin   string
		dir     string
		timeout time.Duration
		output  string
		stderr  string
		err     string // "" for none
		maxTime time.Duration
	}{
		{name: "exit 0, one line end dropped", mode: "print", output: "a\nb"},
		{name: "stdin", mode: "cat", stdin: "the input", output: "the input"},
		{name: "env and dir", mode: "env", dir: dir, output: "x " + filepath.Base(dir)},
		{name: "exit status", mode: "fail", output: "out", stderr: "err", err: "the agent exited with status 3"},
		{name: "timeout", mode: "sleep", timeout: 500 * time.Millisecond, err: "the agent did not finish within 0.5 s (agent.timeout_s), and was killed", maxTime: 10 * time.Second},
		// What it left running holds the output open until the wait delay,
		// and is killed then with the program's job (group_windows.go).
		{name: "left running", mode: "leave", output: "started", maxTime: waitDelay + 8*time.Second},
	}
	mark := filepath.Join(dir, "mark")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := self(t, tt.mode)
			s.Stdin, s.Dir = tt.stdin, tt.dir
			s.Env = append(s.Env, "DRYFIRE_PROGRAM_MARK="+mark)
			if tt.timeout > 0 {
				s.Timeout = tt.timeout
			}
			start := time.Now()
			r := Run(context.Background(), s)
			if tt.maxTime > 0 && time.Since(start) > tt.maxTime {
				t.Errorf("took %s, want under %s", time.Since(start), tt.maxTime)
			}
			if r.Output != tt.output || strings.TrimRight(r.Stderr, "\r\n") != tt.stderr {
				t.Errorf("output %q, stderr %q; want %q, %q", r.Output, r.Stderr, tt.output, tt.stderr)
			}
			got := ""
			if r.Err != nil {
				got = r.Err.Error()
			}
			if tt.err == "" && got != "" || !strings.HasPrefix(got, tt.err) || r.Infra {
				t.Errorf("err %q (infra %v), want %q…", got, r.Infra, tt.err)
			}
			if tt.mode == "leave" {
				time.Sleep(time.Until(start.Add(waitDelay + 4*time.Second)))
				if _, err := os.Stat(mark); err == nil {
					t.Error("what the program left running was not killed with it")
				}
			}
		})
	}
}

func TestRunInterruptedWindows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	r := Run(ctx, self(t, "sleep"))
	if r.Err == nil || r.Err.Error() != "interrupted" || !r.Infra {
		t.Fatalf("err %v (infra %v), want interrupted (infra)", r.Err, r.Infra)
	}
}

func TestRunTalkWindows(t *testing.T) {
	pr, pw := io.Pipe()
	var heard []string
	s := self(t, "talk")
	s.Stdout = pw
	s.Talk = func(ctx context.Context, stdin io.WriteCloser, exited <-chan struct{}) {
		lines := bufio.NewScanner(pr)
		for _, say := range []string{"one", "two"} {
			fmt.Fprintln(stdin, say)
			lines.Scan()
			heard = append(heard, strings.TrimRight(lines.Text(), "\r"))
		}
		stdin.Close()
		go io.Copy(io.Discard, pr)
		<-exited
		pw.Close()
	}
	r := Run(context.Background(), s)
	if r.Err != nil || r.Output != "" || !slices.Equal(heard, []string{"got one", "got two"}) {
		t.Fatalf("err %v, output %q, heard %q", r.Err, r.Output, heard)
	}
}
