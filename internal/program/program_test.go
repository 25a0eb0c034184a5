package program

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func TestRunEnds(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		output  string
		stderr  string
		err     string // "" for none
		infra   bool
		maxTime time.Duration
	}{
		{name: "exit 0, one line end dropped", spec: Spec{Argv: sh(`printf 'a\nb\r\n'`)}, output: "a\nb"},
		{name: "stdin", spec: Spec{Argv: sh(`cat`), Stdin: "the input"}, output: "the input"},
		{name: "env and dir", spec: Spec{Argv: sh(`echo "$X $(basename "$PWD")"`), Env: []string{"X=x"}, Dir: "/tmp"}, output: "x tmp"},
		{name: "exit status", spec: Spec{Argv: sh(`echo out; echo err >&2; exit 3`)}, output: "out", stderr: "err", err: "the agent exited with status 3"},
		{name: "signal", spec: Spec{Argv: sh(`kill -TERM $$`)}, err: "the agent was killed by signal terminated"},
		{name: "timeout", spec: Spec{Argv: sh(`sleep 30`), Timeout: 200 * time.Millisecond}, err: "the agent did not finish within 0.2 s (agent.timeout_s), and was killed", maxTime: 10 * time.Second},
		{name: "cannot start", spec: Spec{Argv: []string{"./no such program"}, Command: []string{"no such program", "x"}}, err: `the agent could not start: "no such program" x: `, infra: true},
		// What the program leaves running is killed with it, and does not
		// hold the run open for its own length.
		{name: "left running", spec: Spec{Argv: sh(`sleep 30 & echo started`)}, output: "started", maxTime: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.Timeout == 0 {
				tt.spec.Timeout = time.Minute
			}
			start := time.Now()
			r := Run(context.Background(), tt.spec)
			if tt.maxTime > 0 && time.Since(start) > tt.maxTime {
				t.Errorf("took %s, want under %s", time.Since(start), tt.maxTime)
			}
			if r.Output != tt.output || r.Stderr != tt.stderr {
				t.Errorf("output %q, stderr %q; want %q, %q", r.Output, r.Stderr, tt.output, tt.stderr)
			}
			got := ""
			if r.Err != nil {
				got = r.Err.Error()
			}
			if tt.err == "" && got != "" || !strings.HasPrefix(got, tt.err) || r.Infra != tt.infra {
				t.Errorf("err %q (infra %v), want %q… (infra %v)", got, r.Infra, tt.err, tt.infra)
			}
		})
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := Run(ctx, Spec{Argv: sh(`sleep 30`), Timeout: time.Minute})
	if r.Err == nil || r.Err.Error() != "interrupted" || !r.Infra {
		t.Fatalf("err %v (infra %v), want interrupted (infra)", r.Err, r.Infra)
	}
}

// A conversation reads the program's lines from Stdout and writes to its
// standard input until it closes it; Output stays empty.
func TestRunTalk(t *testing.T) {
	pr, pw := io.Pipe()
	var heard []string
	r := Run(context.Background(), Spec{
		Argv:    sh(`while read l; do echo "got $l"; done`),
		Timeout: time.Minute,
		Stdout:  pw,
		Talk: func(ctx context.Context, stdin io.WriteCloser, exited <-chan struct{}) {
			lines := bufio.NewScanner(pr)
			for _, say := range []string{"one", "two"} {
				fmt.Fprintln(stdin, say)
				lines.Scan()
				heard = append(heard, lines.Text())
			}
			stdin.Close()
			go io.Copy(io.Discard, pr)
			<-exited
			pw.Close()
		},
	})
	if r.Err != nil || r.Output != "" || !slices.Equal(heard, []string{"got one", "got two"}) {
		t.Fatalf("err %v, output %q, heard %q", r.Err, r.Output, heard)
	}
}

func TestCappedAndTail(t *testing.T) {
	c := &capped{max: 5}
	c.Write([]byte("abc"))
	c.Write([]byte("defg"))
	if c.String() != "abcde" || !c.cut {
		t.Errorf("capped: %q cut=%v", c.String(), c.cut)
	}
	var w tail
	for i := range StderrLines + 5 {
		fmt.Fprintf(&w, "line %d\r\n", i)
	}
	w.Write([]byte(strings.Repeat("x", maxTailLine+10) + "\n\n"))
	lines := strings.Split(w.String(), "\n")
	if len(lines) != StderrLines || lines[0] != "line 6" || lines[len(lines)-1] != strings.Repeat("x", maxTailLine)+"…" {
		t.Errorf("tail: %d lines, first %q, last %d bytes", len(lines), lines[0], len(lines[len(lines)-1]))
	}
	if (&tail{}).String() != "" {
		t.Error("empty tail is not empty")
	}
}

func TestEnviron(t *testing.T) {
	drop := func(k string) bool { return k == "SECRET" || strings.HasPrefix(k, "OURS_") }
	set := [][2]string{{"OURS_A", "1"}, {"B", "2"}}
	tests := []struct {
		name string
		base []string
		want []string
	}{
		{"replaced, in order", []string{"PATH=/bin", "SECRET=x", "OURS_A=old", "OURS_Z=old", "HOME=/h"},
			[]string{"PATH=/bin", "HOME=/h", "OURS_A=1", "B=2"}},
		{"no proxy: NO_PROXY kept as it is, last", []string{"NO_PROXY=corp", "PATH=/bin"},
			[]string{"PATH=/bin", "OURS_A=1", "B=2", "NO_PROXY=corp"}},
		{"a proxy: loopback added to both", []string{"https_proxy=http://p:1", "NO_PROXY=corp"},
			[]string{"https_proxy=http://p:1", "OURS_A=1", "B=2", "NO_PROXY=corp,127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost"}},
		{"an empty proxy is none", []string{"HTTP_PROXY="},
			[]string{"HTTP_PROXY=", "OURS_A=1", "B=2"}},
	}
	for _, tt := range tests {
		if got := Environ(tt.base, drop, set); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestAbsArgs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	got := AbsArgs(dir, []string{"python3", "agent.py", "-v", "sub", "/abs/x", ""})
	want := []string{"python3", filepath.Join(dir, "agent.py"), "-v", "sub", "/abs/x", ""}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
