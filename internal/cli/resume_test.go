package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// killresume SEED KILLS CASES JOURNAL ARGS... runs `dryfire run ARGS`
// KILLS times, the first with --journal JOURNAL and the others with
// --resume JOURNAL, and kills each with SIGKILL at a point drawn from
// SEED: once the journal holds a number of finished cases (drawn among
// 1 to CASES-3, in order), after a further 0 to 10 ms. A run that ends
// before its kill fails the command: it would test nothing.
func cmdKillResume(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 5 {
		ts.Fatalf("usage: killresume SEED KILLS CASES JOURNAL ARGS...")
	}
	seed, err := strconv.ParseUint(args[0], 10, 64)
	ts.Check(err)
	kills, err := strconv.Atoi(args[1])
	ts.Check(err)
	cases, err := strconv.Atoi(args[2])
	ts.Check(err)
	journal := ts.MkAbs(args[3])
	rng := rand.New(rand.NewPCG(seed, 41))
	// Distinct points, in order, so that each run gets further.
	points := map[int]bool{}
	for len(points) < kills {
		points[1+rng.IntN(cases-3)] = true
	}
	var at []int
	for p := range points {
		at = append(at, p)
	}
	slices.Sort(at)
	for k, target := range at {
		flag := "--resume"
		if k == 0 {
			flag = "--journal"
		}
		cmd := exec.Command("dryfire", append([]string{"run", flag, journal}, args[4:]...)...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = append(os.Environ(), "GORACE="+ts.Getenv("GORACE"), "PATH="+ts.Getenv("PATH"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		ts.Check(cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.Now().Add(60 * time.Second)
		for journaled(journal) < target {
			select {
			case err := <-exited:
				ts.Fatalf("run %d ended (%v) before its kill at %d journaled cases:\n%s", k+1, err, target, out.String())
			default:
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				ts.Fatalf("run %d: no %d journaled cases within 60 s", k+1, target)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(11)) * time.Millisecond)
		ts.Check(cmd.Process.Signal(syscall.SIGKILL))
		err := <-exited
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			ts.Fatalf("run %d ended before its kill (%v):\n%s", k+1, err, out.String())
		}
		ts.Logf("run %d killed at %d journaled cases (%d after the wait)", k+1, target, journaled(journal))
	}
}

// journaled is how many whole records follow the journal's head.
func journaled(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return max(0, bytes.Count(data, []byte{'\n'})-1)
}

// journalonce JOURNAL CASES: the journal holds each of the run's CASES
// cases exactly once, each line whole (none ran twice).
func cmdJournalOnce(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: journalonce JOURNAL CASES")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	lines := strings.Split(strings.TrimSuffix(ts.ReadFile(args[0]), "\n"), "\n")
	seen := make([]int, n)
	for _, l := range lines[1:] {
		_, body, _ := strings.Cut(l, " ")
		var rec struct {
			I int `json:"i"`
		}
		if err := json.Unmarshal([]byte(body), &rec); err != nil || rec.I < 0 || rec.I >= n {
			ts.Fatalf("%s: a record that is no case of %d: %.80s", args[0], n, l)
		}
		seen[rec.I]++
	}
	var bad []string
	for i, c := range seen {
		if c != 1 {
			bad = append(bad, fmt.Sprintf("case %d %d times", i, c))
		}
	}
	if len(bad) > 0 {
		ts.Fatalf("%s: %s", args[0], strings.Join(bad, ", "))
	}
}

// cuttail FILE N cuts the last N bytes off FILE: a record a crash cut
// short.
func cmdCutTail(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cuttail FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.Truncate(ts.MkAbs(args[0]), st.Size()-int64(n)))
}

// flipbyte FILE OFFSET changes the byte at OFFSET of FILE: damage.
func cmdFlipByte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE OFFSET")
	}
	off, err := strconv.Atoi(args[1])
	ts.Check(err)
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if off >= len(data) {
		ts.Fatalf("%s has %d bytes", args[0], len(data))
	}
	data[off] ^= 0x20
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}
