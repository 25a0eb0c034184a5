package report

import (
	"strings"
	"testing"
)

func batchOf(cases int, positions ...int) *Report {
	r := shardOf(0, 0, cases, positions...)
	r.Shard.Batch = true
	return r
}

func TestMergeBatches(t *testing.T) {
	// Batches of any size and order, with a shard among them.
	a, b, c := batchOf(5, 4, 0), batchOf(5, 2), shardOf(2, 2, 5, 1, 3)
	b.Shard.Infra, b.Shard.Live = []int{2}, 3
	b.Cases[0].Status = Errored
	m, err := Merge([]*Report{c, a, b}, []string{"c", "a", "b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range m.Cases {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ""); got != "abcde" || m.Summary.Passed != 4 || m.Summary.Error != 1 || m.Shard != nil {
		t.Errorf("merged %q, %+v, shard %v", got, m.Summary, m.Shard)
	}
	if !m.Cases[2].Infra || m.Cases[2].Live != 3 {
		t.Errorf("infra %v, live %d: want the batch's", m.Cases[2].Infra, m.Cases[2].Live)
	}
}

func TestMergeBatchesRefuses(t *testing.T) {
	list := &CaseList{Suites: "sha256:x", Cases: []ListedCase{{ID: "a-1", Suite: "s", Name: "a"}, {ID: "b-2", Suite: "s", Name: "b"}, {ID: "c-3", Suite: "s", Name: "c"}}}
	names := []string{"one.json", "two.json"}
	other := batchOf(3, 2)
	other.Shard.Suites = "sha256:y"
	for _, tc := range []struct {
		name string
		reps []*Report
		list *CaseList
		want string
	}{
		{"missing", []*Report{batchOf(3, 0), batchOf(3, 2)}, nil, `1 of the run's 3 cases is in no part: case 2 of 3 (after "s: a", before "s: c"); give the reports of every part (merge --list LIST.json, the run's dryfire run --list --json, names the cases missing by id)`},
		{"missing listed", []*Report{batchOf(3, 0), batchOf(3, 2)}, list, `1 of the run's 3 cases is in no part: b-2 ("s: b"); give the reports of every part`},
		{"twice", []*Report{batchOf(3, 0, 1), batchOf(3, 1, 2)}, list, `1 case run twice: b-2 ("s: b") (in one.json and two.json); give each case to one part only`},
		{"other suites", []*Report{batchOf(3, 0, 1), other}, nil, "one.json and two.json are parts of different runs: their suites differ (or cases, trials, pass threshold or seed: suites sha256:x vs sha256:y, 3 vs 3 cases); merge the parts of one run"},
		{"not a part", []*Report{batchOf(3, 0, 1), {Cases: []Case{}}}, nil, "two.json is not the report of a part of a run (dryfire run --cases FILE or --shard I/N writes those); only the parts of one run merge"},
		{"outside", []*Report{batchOf(3, 0, 1), batchOf(3, 7)}, nil, "two.json places a case at 7, outside the run's 3 cases"},
		{"list of another run", []*Report{batchOf(2, 0, 1)}, list, "the case list is of another run than one.json: its suites sha256:x and 3 cases, the run's sha256:x and 2"},
		// A count the parts cannot fill is refused before anything the
		// size of it is made (bounded by what the reports hold).
		{"huge count", []*Report{batchOf(2_000_000_000, 0), batchOf(2_000_000_000, 1)}, nil, "1999999998 of the run's 2000000000 cases are in no part: case 3 of 2000000000 (after \"s: b\"), case 4 of 2000000000, "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.reps, names[:len(tc.reps)], &MergeOptions{List: tc.list})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
