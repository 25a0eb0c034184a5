package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// clockAgents print what they read as the time, their zone, the local
// time and DRYFIRE_NOW, as JSON.
var clockAgents = map[string][]string{
	"python3": {"python3", "-c", `import json, os, time, datetime
print(json.dumps({"now": time.time(), "tz": os.environ.get("TZ"), "env": os.environ.get("DRYFIRE_NOW"), "hour": datetime.datetime.now().hour}))`},
	"node": {"node", "-e", `console.log(JSON.stringify({now: Date.now() / 1000, tz: process.env.TZ, env: process.env.DRYFIRE_NOW, hour: new Date().getHours()}))`},
}

// hasLibfaketime says whether Debian's libfaketime is installed where the
// runner looks; DRYFIRE_TEST_FAKETIME=1 (the CI part that installs it)
// makes its absence a failure.
func hasLibfaketime(t *testing.T) bool {
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	if os.Getenv("DRYFIRE_TEST_FAKETIME") == "1" {
		t.Fatal("DRYFIRE_TEST_FAKETIME=1 but libfaketime is not installed")
	}
	return false
}

// agent.clock: a Python and a Node program read the clock's time (with
// libfaketime), its zone and DRYFIRE_NOW; --clock moves it, keeping the
// zone.
func TestClockForPrograms(t *testing.T) {
	faked := hasLibfaketime(t)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	moved := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	for name, command := range clockAgents {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(name); err != nil {
				t.Skip(name + " is not installed")
			}
			quoted := make([]string, len(command))
			for i, a := range command {
				data, _ := json.Marshal(a)
				quoted[i] = string(data)
			}
			suite := "version: 1\nagent:\n  command: [" + strings.Join(quoted, ", ") + "]\n  clock: {now: \"2026-01-02T03:04:05Z\", tz: Europe/Berlin}\ncases:\n  - name: time\n    input: what time is it\n"
			suites := writeSuite(t, t.TempDir(), "clock.dryfire.yaml", suite)
			for _, tt := range []struct {
				clock  *time.Time
				want   time.Time
				hour   int  // in Berlin
				nofake bool // DRYFIRE_LIBFAKETIME names no library: as if none were installed
			}{{nil, start, 4, false}, {&moved, moved, 14, false}, {nil, start, 4, true}} {
				env := commandEnv()
				if tt.nofake {
					env = append(env, "DRYFIRE_LIBFAKETIME=/nonexistent/libfaketimeMT.so.1")
				}
				rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: env, Clock: tt.clock})
				if err != nil {
					t.Fatal(err)
				}
				c := rep.Cases[0]
				if c.Status != report.Passed {
					t.Fatalf("%s %s\n%s", c.Status, c.Reason, c.Stderr)
				}
				var got struct {
					Now  float64
					TZ   string
					Env  string
					Hour int
				}
				if err := json.Unmarshal([]byte(c.Output), &got); err != nil {
					t.Fatalf("output %q: %v", c.Output, err)
				}
				if got.TZ != "Europe/Berlin" || got.Env != tt.want.Format(time.RFC3339) {
					t.Errorf("TZ %q, DRYFIRE_NOW %q; want Europe/Berlin, %s", got.TZ, got.Env, tt.want.Format(time.RFC3339))
				}
				noted := slices.Contains(c.Notes, runner.NoteNoFaketime)
				if !faked || tt.nofake {
					if !noted {
						t.Errorf("without libfaketime, no note says so: %q", c.Notes)
					}
					continue
				}
				if noted {
					t.Errorf("libfaketime is installed, yet: %q", c.Notes)
				}
				// The clock starts at the time given and runs from there.
				at := time.Unix(0, int64(got.Now*1e9))
				if at.Before(tt.want) || at.After(tt.want.Add(time.Minute)) || got.Hour != tt.hour {
					t.Errorf("the program read %s (hour %d in its zone); want %s and a few seconds, hour %d", at.UTC(), got.Hour, tt.want, tt.hour)
				}
			}
		})
	}
}
