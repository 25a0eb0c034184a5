package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// A file check's path that is a symlink to nothing outside the workspace
// (the agent program can make one, and its target later) is refused as
// outside, whatever the check asks: before, exists: true passed on the
// link alone. A symlink to nothing inside is a file that does not exist.
func TestFileCheckRefusesADanglingSymlinkOutside(t *testing.T) {
	dir := t.TempDir()
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	os.MkdirAll(filepath.Join(ws, "out"), 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(ws, "probe"), nil, 0o644)
	if err := os.Symlink("probe", filepath.Join(ws, "probe.link")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "probe.link")); err != nil {
		t.Skipf("symlinks do not resolve here: %v", err)
	}
	os.Symlink(filepath.Join(outside, "report.json"), filepath.Join(ws, "out", "report.json"))
	os.Symlink(filepath.Join("..", "..", "outside"), filepath.Join(ws, "data"))
	os.Symlink("later.txt", filepath.Join(ws, "inside.txt"))
	facts := &check.Facts{Workspace: ws}
	for _, tc := range []struct {
		check string
		want  string
	}{
		{`file: {path: out/report.json, exists: true}`, `out/report.json: the path is outside the project root ` + ws + `: the symlink "out/report.json" -> `},
		{`file: {path: out/report.json, contains: x}`, `out/report.json: the path is outside the project root ` + ws + `: the symlink "out/report.json" -> `},
		{`file: {path: data/x.txt, absent: true}`, `data/x.txt: the path is outside the project root ` + ws + `: the symlink "data" -> "../../outside" leads outside it`},
		{`file: {path: inside.txt, contains: x}`, `reading inside.txt: open `},
	} {
		rs := check.Evaluate([]*spec.Check{parseCheck(t, tc.check)}, facts)
		if len(rs) != 1 || rs[0].Passed || !strings.HasPrefix(rs[0].Message, tc.want) {
			t.Errorf("%s: %+v; want it failed with %q", tc.check, rs, tc.want)
		}
	}
}
