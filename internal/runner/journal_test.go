package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/report"
)

// TestJournalRoundTrip: what a journal keeps reads back as it was, and
// a last record cut short is dropped, not refused.
func TestJournalRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := OpenJournal(path, false, "b")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.start("sha256:x", 3); err != nil {
		t.Fatal(err)
	}
	j.add(2, &report.Case{Suite: "s", Name: "c", Status: report.Passed, Checks: []report.Check{}})
	j.add(0, &report.Case{Suite: "s", Name: "a", Status: report.Errored, Infra: true, Live: 2})
	if _, err := j.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenJournal(path, true, "b")
	if err != nil {
		t.Fatal(err)
	}
	if n, torn := r.Finished(); n != 1 || torn {
		t.Errorf("finished %d, torn %v; want 1 (an infrastructure error is not finished), false", n, torn)
	}
	if err := r.start("sha256:x", 3); err != nil {
		t.Fatal(err)
	}
	if c, ok, err := r.finished(2); !ok || err != nil || c.Name != "c" || c.Status != report.Passed {
		t.Errorf("case 2: %+v %v %v", c, ok, err)
	}
	if _, ok, _ := r.finished(0); ok {
		t.Error("an infrastructure error is run again, not taken from the journal")
	}
	r.Close()

	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-5], 0o644)
	r, err = OpenJournal(path, true, "b")
	if err != nil {
		t.Fatal(err)
	}
	if n, torn := r.Finished(); n != 1 || !torn {
		t.Errorf("after a cut: finished %d, torn %v; want 1, true", n, torn)
	}
	r.Close()
}

func TestJournalRefusesAnotherRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, _ := OpenJournal(path, false, "b")
	j.start("sha256:x", 3)
	j.Close()
	for _, tc := range []struct {
		suites, build string
		cases         int
		want          string
	}{
		{"sha256:y", "b", 3, "is the journal of another run"},
		{"sha256:x", "b", 4, "is the journal of another run"},
		{"sha256:x", "c", 3, "was written by another build of dryfire"},
	} {
		r, err := OpenJournal(path, true, tc.build)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.start(tc.suites, tc.cases); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
		r.Close()
	}
}

// FuzzJournal: a journal of any bytes opens, or is refused with an
// error; none panics or is changed.
func FuzzJournal(f *testing.F) {
	f.Add([]byte("c1f4b6d2 {\"journal\":\"dryfire\",\"version\":1,\"suites\":\"x\",\"cases\":2,\"build\":\"b\"}\n"))
	f.Add([]byte("00000000 {}\n00000000 {}\n"))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "j")
		os.WriteFile(path, data, 0o644)
		j, err := OpenJournal(path, true, "b")
		if err == nil {
			j.Finished()
			j.Close()
		}
		after, _ := os.ReadFile(path)
		if string(after) != string(data) {
			t.Errorf("the journal changed on opening it")
		}
	})
}
