package report

import (
	"runtime"
	"strings"
	"testing"
)

func shardOf(index, count, cases int, positions ...int) *Report {
	r := &Report{Shard: &Shard{Index: index, Count: count, Cases: cases, Positions: positions, Suites: "sha256:x", Build: "b", Infra: []int{}}}
	for _, p := range positions {
		r.Cases = append(r.Cases, Case{Suite: "s", Name: string(rune('a' + p)), Status: Passed})
	}
	return r
}

func TestMergeRefuses(t *testing.T) {
	names := []string{"one.json", "two.json"}
	for _, tc := range []struct {
		name string
		reps []*Report
		want string
	}{
		{"overlap", []*Report{shardOf(1, 2, 3, 0, 1), shardOf(2, 2, 3, 1, 2)}, "one.json and two.json both have case 2 (s: b): the shards overlap"},
		{"gap", []*Report{shardOf(1, 2, 3, 0), shardOf(2, 2, 3, 2)}, "no shard has case 2 of 3: the shards leave a gap"},
		{"outside", []*Report{shardOf(1, 2, 3, 0, 1), shardOf(2, 2, 3, 5)}, "two.json places a case at 5, outside the run's 3 cases"},
		{"counts", []*Report{shardOf(1, 2, 3, 0, 1), shardOf(2, 3, 3, 2)}, "two.json is shard 2/3, but one.json is shard 1/2: the shards of one run all have the same count"},
		{"index", []*Report{shardOf(1, 2, 3, 0, 1), shardOf(3, 2, 3, 2)}, "two.json says it is shard 3 of 2"},
		{"edited", []*Report{shardOf(1, 2, 3, 0, 1), {Cases: []Case{{}}, Shard: &Shard{Index: 2, Count: 2, Cases: 3, Suites: "sha256:x", Build: "b"}}}, "two.json has 1 cases but places for 0: the report was changed after the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.reps, names, nil)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestMergeOrdersAndTallies(t *testing.T) {
	a, b := shardOf(1, 2, 4, 1, 3), shardOf(2, 2, 4, 0, 2)
	b.Cases[1].Status, b.Cases[1].Live = Errored, 0
	b.Shard.Infra, b.Shard.Live = []int{2}, 7
	m, err := Merge([]*Report{b, a}, []string{"b", "a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range m.Cases {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ""); got != "abcd" || m.Summary.Passed != 3 || m.Summary.Error != 1 || m.Shard != nil {
		t.Errorf("merged %q, %+v, shard %v", got, m.Summary, m.Shard)
	}
	if !m.Cases[2].Infra || m.Cases[0].Live != 7 {
		t.Errorf("infra %v, live %d: want the shard's", m.Cases[2].Infra, m.Cases[0].Live)
	}
}

// Hole 5 of issue 36: a shard report's count and cases were trusted, and
// merge allocated by them (count or cases of 2e9: a fatal out of memory;
// 1e8: 140 s, 6 GB). They are checked against what the reports hold, and
// the count against the bound of run --shard, with bounded memory.
func TestMergeTrustsNoCount(t *testing.T) {
	names := []string{"one.json", "two.json"}
	for _, tc := range []struct {
		name string
		reps []*Report
		want string
	}{
		{"count 2e9", []*Report{shardOf(1, 2_000_000_000, 3, 0, 1), shardOf(2, 2_000_000_000, 3, 2)},
			"one.json says it is shard 1 of 2000000000: a run has at most 1000000 shards (report.MaxShards)"},
		{"count 1e6", []*Report{shardOf(1, 1_000_000, 3, 0, 1), shardOf(2, 1_000_000, 3, 2)},
			"shard 3/1000000, 4/1000000, 5/1000000, 6/1000000, 7/1000000, 8/1000000, 9/1000000, 10/1000000, 11/1000000, 12/1000000 and 999988 more missing: give the reports of all 1000000 shards"},
		{"cases 2e9", []*Report{shardOf(1, 2, 2_000_000_000, 0, 1), shardOf(2, 2, 2_000_000_000, 2)},
			"no shard has case 4 of 2000000000: the shards leave a gap"},
		{"cases 1e8 and a gap first", []*Report{shardOf(1, 2, 100_000_000, 1, 2), shardOf(2, 2, 100_000_000, 3)},
			"no shard has case 1 of 100000000: the shards leave a gap"},
		{"negative cases", []*Report{shardOf(1, 2, -1, 0, 1), shardOf(2, 2, -1, 2)},
			"one.json says the run has -1 cases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Merge(tc.reps, names, nil)
			runtime.ReadMemStats(&after)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("merging 3 cases allocated %d bytes", n)
			}
		})
	}
}
