package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/report"
)

// caseRoutesAgent: the case "victim" waits and calls nothing; the case
// "attacker" POSTs a call to the victim's tool route (the path in
// victim.txt, on its own URL's host) and prints the status and body.
const caseRoutesAgent = `import os, sys, time, urllib.request, urllib.error
if os.environ["DRYFIRE_CASE"] == "victim":
    time.sleep(1.5)
    print("waited")
    sys.exit(0)
url = os.environ["DRYFIRE_TOOLS_URL"]
base = url[:url.index("/cases/")]
path = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "victim.txt")).read().strip()
req = urllib.request.Request(base + path, data=b'{"forged": true}', headers={"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
`

// Hole 2 of issue 36: a case's program reaches dryfire through its own
// jail's listener, yet could call another case's routes (/cases/ID/...):
// the other case's record got the forged call, and its called check
// passed though its program never called. A connection through a case's
// jail reaches that case's routes only: another's are answered 403,
// naming why, and nothing is recorded there. Under every jailed level.
func TestCaseReachesOnlyItsOwnRoutes(t *testing.T) {
	netnsOrSkip(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "agent.py"), []byte(caseRoutesAgent), 0o644)
	suites := writeSuite(t, dir, "routes.dryfire.yaml", `version: 1
agent:
  command: [python3, agent.py]
mocks:
  secret: [{return: granted}]
cases:
  - {name: victim, input: x, expect: [{not_called: {tool: secret}}]}
  - {name: attacker, input: x, expect: [{output: {contains: "403"}}]}
`)
	victim := spec.NewCaseIDs(suites).ID(0, 0, "victim")
	os.WriteFile(filepath.Join(dir, "victim.txt"), []byte("/cases/"+victim+"/tools/secret\n"), 0o644)
	for _, network := range []string{"isolated", "sandboxed", "report"} {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 2, Record: cassette.None, Network: network, Env: commandEnv()})
		if err != nil {
			t.Fatal(err)
		}
		v, a := rep.Cases[0], rep.Cases[1]
		if v.Status != report.Passed || len(v.ToolCalls) != 0 {
			t.Errorf("%s: the victim %s %s, %d calls recorded: %+v", network, v.Status, v.Reason, len(v.ToolCalls), v.ToolCalls)
		}
		if a.Status != report.Passed || !strings.Contains(a.Output, "reaches only its own routes") {
			t.Errorf("%s: the attacker %s %s; output %q\n%s", network, a.Status, a.Reason, a.Output, a.Stderr)
		}
	}
}
