package world

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStarlarkSilentUnderMemoryCap: under a memory cap Starlark cannot
// reserve its 4 GB of small integers and logs so while it initialises;
// internal/quietlog drops the standard logger's output before that. The
// test binary is started again, printing its package initialisation
// (GODEBUG=inittrace=1): quietlog's comes before Starlark's; and, where
// the race detector's own reservations allow a cap, under prlimit
// --as=3G nothing reaches standard error.
func TestStarlarkSilentUnderMemoryCap(t *testing.T) {
	if os.Getenv("DRYFIRE_QUIETLOG_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStarlarkSilentUnderMemoryCap$")
	cmd.Env = append(os.Environ(), "DRYFIRE_QUIETLOG_CHILD=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	quiet := strings.Index(string(out), "init github.com/dryfire-dev/dryfire/internal/quietlog ")
	star := strings.Index(string(out), "init go.starlark.net/starlark ")
	if quiet < 0 || star < 0 || quiet > star {
		t.Fatalf("quietlog must initialise before go.starlark.net/starlark (at %d, %d):\n%s", quiet, star, out)
	}
	if raceEnabled {
		t.Log("the race detector reserves more than a 3 GB cap allows: the capped run is left to a build without -race")
		return
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	cmd = exec.Command("prlimit", "--as=3221225472", os.Args[0], "-test.run=^TestStarlarkSilentUnderMemoryCap$")
	cmd.Env = append(os.Environ(), "DRYFIRE_QUIETLOG_CHILD=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("under prlimit --as=3G: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Fatalf("under a memory cap, standard error got:\n%s", stderr.String())
	}
}
