#!/usr/bin/env bash
# ci: side
# The coding-agent CLIs under agent.cli (docs/coding-agents.md): Claude Code,
# Codex CLI and Gemini CLI at the versions the adapters are tested with
# (e2e/coding-agents/package-lock.json), installed into
# e2e/coding-agents/node_modules (git-ignored; npm ci only when the lock
# file is newer), each run by dryfire offline on the script model, under
# agent.network: sandboxed, no key:
# - "fix the failing test": it reads calc.py, edits it, runs the tests
#   with its shell tool, calls the suite's MCP tool run_check twice (a
#   mock sequence whose first answer is an error: the report shows the
#   error, then the answer) and answers; checks on
#   the file, its own tool calls as read off the model wire (the read,
#   the edit, the shell command), the MCP calls (each once in the
#   transcript) and the post-run command (python3 -m unittest) pass;
# - "edits wrongly": the same with a wrong edit, which must fail with a
#   readable reason (the file check, the edit's check and the command's
#   exit code and output);
# - the SDKs built on them under agent.command, scripted the same way:
#   the Claude Agent SDK for TypeScript (sdk/claude_agent.mjs) and for
#   Python (sdk/claude_agent.py, in .cache/coding-agents/venv from
#   requirements.txt), the Codex SDK (sdk/codex_agent.mjs: Codex with
#   OpenAI's own provider, over the Responses WebSocket); and a drill
#   with the support-desk world under pytest (sdk/test_drills.py,
#   run_drills) for the Python agent, and under node:test
#   (sdk/drills.test.mjs, runDrills of this checkout's TypeScript SDK)
#   for the TypeScript and the Codex SDK's agents;
# - TestCodingCLIRecordOnceReplayAnywhere: each CLI's session recorded
#   against the project's fake model APIs in one place at UTC+14 replays
#   from another place at UTC-12 (the CLI's normalisation preset);
# - BenchmarkCodingCLIReplay: a 30-turn Claude Code session replayed, timed.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=e2e/coding-agents
out=$PWD/.cache/coding-agents
mkdir -p "$out"
stamp() { echo "-- $1 (at ${SECONDS}s)"; }

stamp "installing the pinned CLIs and SDKs"
if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
	(cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
fi
# The Claude Agent SDK for Python, pytest and the dryfire Python SDK (run_drills), in a venv
# made again when the requirements change (the SDK is installed again every time: it is this
# checkout's).
python=${PYTHON:-python3}
if [ ! -x "$out/venv/bin/python" ] || [ "$dir/requirements.txt" -nt "$out/venv/.stamp" ]; then
	rm -rf "$out/venv"
	"$python" -m venv "$out/venv"
	"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$dir/requirements.txt"
	touch "$out/venv/.stamp"
fi
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --force-reinstall ./sdk/python
go build -o "$out/dryfire" ./cmd/dryfire
for cli in claude codex gemini; do
	echo "$cli: $("$dir/node_modules/.bin/$cli" --version 2>/dev/null | head -1)"
done

stamp "each CLI fixes the failing test (Codex also over the Responses WebSocket), and each SDK built on them"
"$out/dryfire" run "$dir" --filter 'fix the failing test' -j 3 --record none --json "$out/fix.json"
# The MCP mock's sequence as each CLI met it: the error first, then the answer, each call once
# in the transcript (served by dryfire, not again as one of the CLI's own).
python3 - "$out/fix.json" <<'PY'
import json, sys
cases = [c for c in json.load(open(sys.argv[1]))["cases"] if "sdk-" not in c["suite"]]
assert len(cases) == 4, [c["suite"] for c in cases]
for c in cases:
    got = [(t["tool"], t.get("where", ""), t["is_error"], t["result"]) for t in c["tool_calls"] if "run_check" in t["tool"]]
    want = [("run_check", "", True, "checker busy, try again"), ("run_check", "", False, '{"ok":true}')]
    assert got == want, f"{c['suite']}: the MCP calls {got}, want {want}"
    print(f"{c['suite']}: run_check: the error, then the answer, each once")
PY

stamp "a drill with a world under pytest: the Claude Agent SDK for Python (run_drills)"
DRYFIRE_BIN="$out/dryfire" "$out/venv/bin/python" -m pytest -p no:cacheprovider -q "$dir/sdk/test_drills.py"

stamp "drills with a world under node:test: the Claude Agent SDK for TypeScript and the Codex SDK (runDrills)"
# The TypeScript SDK of this checkout, built into a folder of this part's (sdk/js's own dist/ is
# 20-js.sh's, which may be building it meanwhile) with the TypeScript compiler pinned here, and
# linked as node_modules/dryfire.
rm -rf "$out/sdk-js"
mkdir -p "$out/sdk-js"
cp -R sdk/js/src sdk/js/scripts sdk/js/package.json sdk/js/tsconfig.json sdk/js/tsconfig.cjs.json "$out/sdk-js/"
ln -s "$PWD/$dir/node_modules" "$out/sdk-js/node_modules"
node "$out/sdk-js/scripts/build.mjs"
ln -sfn "$out/sdk-js" "$dir/node_modules/dryfire"
DRYFIRE_BIN="$out/dryfire" node --test "$dir/sdk/drills.test.mjs"

stamp "each CLI's wrong edit fails, saying why"
status=0
"$out/dryfire" run "$dir" --filter 'edits wrongly' -j 3 --record none >"$out/wrong.txt" 2>&1 || status=$?
grep -v "warning:" "$out/wrong.txt" | grep -E "^(PASS|FAIL|ERROR)|check failed|expected" || true
if [ "$status" != 1 ]; then
	echo "the wrong edits: exit $status, want 1 (every case failed by its checks)"
	exit 1
fi
for cli in claude-code codex gemini-cli; do
	grep -q "^FAIL  $dir/$cli.dryfire.yaml: edits wrongly" "$out/wrong.txt" || { echo "$cli: the wrong edit did not fail"; exit 1; }
done
n=$(grep -c '`python3 -m unittest -q` exited 1; expected 0; its output: ".*AssertionError: 6 != 5' "$out/wrong.txt" || true)
if [ "$n" != 3 ]; then
	echo "the post-run command's failure is not in $n of 3 reports"
	exit 1
fi
# ... naming the wrong edit as the closest call (for Codex, its sed, not the cat before it)
n=$(grep -cE '^ +expected (Edit|exec_command|replace) with \{.*\} to be called at least once; it was never called with matching arguments .*; the closest, in turn [0-9]+, differs at \$\.(new_string|cmd): expected .*a \+ b.*, got .*a \* b' "$out/wrong.txt" || true)
if [ "$n" != 3 ]; then
	echo "the wrong edit's check failed in $n of 3 reports"
	exit 1
fi
stamp "each CLI's session, recorded against the fake APIs, replays from another place on another date"
# and a 30-turn Claude Code session replayed once, timed (BenchmarkCodingCLIReplay: the case's
# wall time, dryfire's CPU share; docs/performance.md)
DRYFIRE_CODING_CLIS=1 go test -count=1 ./internal/runner -run 'TestCodingCLI' -bench 'CodingCLIReplay' -benchtime 1x

stamp "done"
