#!/usr/bin/env bash
# ci: side
# crewai as a real client of stable case ids and tool names (issue 37): examples/crewai-agent,
# a crewai agent on the script model whose MCP tools crewai names after the case's URL
# (mcp_127_0_0_1_PORT_cases_ID_mcp_lookup_order; cut to 64 characters with a hash when longer),
# in a folder of two suites, run whole, filtered and sharded on one fixed port: each case passes
# every time, and its report is the same bytes every time (durations aside), the tool names its
# model saw included. The pinned packages of examples/crewai-agent/requirements.txt go into a
# fresh virtual environment, .cache/crewai/venv (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/.cache/crewai
python=${PYTHON:-python3}

rm -rf "$out/venv" "$out/reports"
mkdir -p "$out/reports"
go build -o "$out/dryfire" ./cmd/dryfire
"$python" -m venv "$out/venv"
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps -r examples/crewai-agent/requirements.txt

export PATH="$out/venv/bin:$PATH"
port=18556
run() { # NAME ARGS...: one run's JSON report, durations zeroed
	local name=$1
	shift
	"$out/dryfire" run examples/crewai-agent --record none --port "$port" --json "$out/reports/$name.json" "$@" >/dev/null
}
run whole
run filtered --filter '^another gold order$'
run shard1 --shard 1/2
run shard2 --shard 2/2
"$python" - "$out/reports" <<'PY'
import json, re, sys
from pathlib import Path

cases = {}
for f in sorted(Path(sys.argv[1]).glob("*.json")):
    for c in json.loads(f.read_text())["cases"]:
        assert c["status"] == "passed", (f.name, c["name"], c["reason"])
        names = [s["last_message"] for s in c.get("script", [])]
        assert any('_mcp_' in n for n in names), (f.name, c["name"], names)
        c["duration_ms"] = 0
        text = json.dumps(c, sort_keys=True)
        assert cases.setdefault(c["name"], text) == text, f"{f.name}: {c['name']} differs from its report in another run"
print(f"crewai: {len(cases)} cases, each passing with the same report whole, filtered and sharded")
PY
