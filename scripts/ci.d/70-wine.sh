#!/usr/bin/env bash
# Windows x64 under Wine (Debian's wine64 8.0, installed without its
# recommends when missing and CI runs as root; skipped with a note where
# it cannot be). The windows/amd64 dryfire.exe runs the quickstart, the
# same suite with CRLF line ends (the same output), validate of a broken
# suite with CRLF (the same positioned errors), and dryfire serve --http
# with dryfire mcp-bridge relaying MCP to it over stdio. Then the Windows
# test binaries of the packages that hold what differs on Windows (paths,
# line ends, file replacement, processes, the CLI's testscripts that need
# no Unix tool) run in their package directories; docs/platforms.md says
# what is left out and why.
#
# Two things Wine 8 lacks are supplied: bcryptprimitives.dll (Go's runtime
# needs its ProcessPrng; lib/wine_bcryptprimitives.py writes one that
# forwards to advapi32) and FileDispositionInformationEx, which Go's
# os.RemoveAll tries first: the test binaries are built with an overlay
# that makes the package testing turn on Go's own fallback
# (internal/syscall/windows.TestDeleteatFallback, the path for older
# Windows and FAT32), so that t.TempDir can be removed. Only testing and
# the tests are compiled again; dryfire.exe is built as the release builds
# it.
set -euo pipefail
cd "$(dirname "$0")/../.."
stamp() { echo "-- $1 (at ${SECONDS}s)"; }

find_wine() { command -v wine64 || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } || true; }
wine=$(find_wine)
if [ -z "$wine" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	stamp "installing Debian's wine64 (CI runs as root)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends wine64 >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends wine64 >/dev/null; } || true
	wine=$(find_wine)
fi
if [ -z "$wine" ]; then
	echo "-- Windows under Wine: not run (no wine64 here; on Debian: apt-get install --no-install-recommends wine64)"
	exit 0
fi
wineserver=$(command -v wineserver || echo "$(dirname "$wine")/wineserver64")

work=$(mktemp -d "${TMPDIR:-/tmp}/dryfire-wine-XXXXXX")
export WINEPREFIX=$work/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml=" WINEARCH=win64
cleanup() {
	"$wineserver" -k 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
win() { "$wine" "$@" 2>&1 | tr -d '\r'; return "${PIPESTATUS[0]}"; }

stamp "a Wine prefix ($("$wine" --version 2>/dev/null))"
"$wine" cmd /c exit >/dev/null 2>&1 || true
sys32=$WINEPREFIX/drive_c/windows/system32
if [ ! -e "$sys32/bcryptprimitives.dll" ]; then
	python3 scripts/ci.d/lib/wine_bcryptprimitives.py "$sys32/bcryptprimitives.dll"
fi

stamp "dryfire.exe (windows/amd64, as the release builds it)"
export GOOS=windows GOARCH=amd64 CGO_ENABLED=0
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
go build -trimpath -buildvcs=false \
	-ldflags "-s -w -buildid= -X github.com/dryfire-dev/dryfire/internal/cli.Commit=$commit" \
	-o "$work/dryfire.exe" ./cmd/dryfire
exe=$work/dryfire.exe
win "$exe" version | tee "$work/version.txt"
grep -qx "target windows/amd64" "$work/version.txt"
grep -qx "commit $commit" "$work/version.txt"

stamp "the quickstart, with LF and with CRLF line ends"
for ends in lf crlf; do
	mkdir -p "$work/$ends"
	cp -r examples/quickstart "$work/$ends/quickstart"
	cp internal/spec/testdata/invalid/unknown_keys_everywhere.dryfire.yaml "$work/$ends/broken.dryfire.yaml"
	if [ $ends = crlf ]; then
		sed -i 's/$/\r/' "$work/$ends/quickstart/support.dryfire.yaml" "$work/$ends/broken.dryfire.yaml"
	fi
	(cd "$work/$ends" && win "$exe" run quickstart --record none >"$work/run-$ends.txt")
	(cd "$work/$ends" && ! win "$exe" validate broken.dryfire.yaml >"$work/validate-$ends.txt")
done
grep -qx "3 passed, 0 failed" "$work/run-lf.txt"
grep -q "^broken.dryfire.yaml:[0-9]*:[0-9]*: " "$work/validate-lf.txt"
for what in run validate; do
	if ! diff -u "$work/$what-lf.txt" "$work/$what-crlf.txt"; then
		echo "dryfire.exe $what: the CRLF suite reads differently (above)" >&2
		exit 1
	fi
done
cat "$work/run-crlf.txt"
echo "validate, LF and CRLF alike: $(tail -1 "$work/validate-crlf.txt")"

stamp "dryfire serve --http, and dryfire mcp-bridge to it over stdio"
"$wine" "$exe" serve examples/quickstart/support.dryfire.yaml --http 127.0.0.1:0 >"$work/serve.txt" 2>&1 &
url=
for _ in $(seq 100); do
	url=$(sed -n 's|.* on \(http://127\.0\.0\.1:[0-9]*\):.*|\1|p' "$work/serve.txt" | head -1)
	[ -n "$url" ] && break
	sleep 0.2
done
if [ -z "$url" ]; then
	cat "$work/serve.txt" >&2
	echo "dryfire.exe serve did not say where it listens" >&2
	exit 1
fi
printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ci","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"}}}' |
	win "$exe" mcp-bridge "$url/mcp" >"$work/bridge.txt"
if ! grep -q '"id":2,"result":{"content":\[{"type":"text","text":"{\\"order_id\\":\\"A-991\\",\\"tier\\":\\"gold\\"' "$work/bridge.txt"; then
	cat "$work/bridge.txt" >&2
	echo "dryfire.exe mcp-bridge: no answer to tools/call (above)" >&2
	exit 1
fi
echo "mcp-bridge: initialize and tools/call answered through $url/mcp"

# PACKAGE|FLAGS (space-separated): what runs of each test binary. Left out: tests that run
# /bin/sh, sed or python3 (Unix tools; Wine starts Linux programs without
# their pipes), signal a process (no signals on Windows), build with go,
# or spell an expected path with the OS's separator.
scripts='case_error|concurrency|content|coverage|directory|docs_http|docs_judge|docs_readme|docs_resources|docs_suites|engine_help|failing|filter|github|help|hostile_workflow_commands|hostile_world_import_pattern|init|missing_path|provider|quickstart|readme|run_refuses_errors|run_warnings|schema|shard_auto|skip|trajectory|trials|usage|validate|verbose|version|world_no_agent|conversation|stdio|version=.*'
tests=(
	"internal/cli|-test.run=^(TestScript|TestServeScript|TestServeStdioProcess|TestServeStdioInProcess)\$/^($scripts)\$ -test.skip=^TestServeScript\$/^usage\$"
	"internal/spec|-test.skip=^TestCheckingCasesTakesFlatMemory$"
	"internal/yamlpos|"
	"internal/program|-test.skip=^(TestRunEnds|TestRunInterrupted|TestRunTalk)$"
	"internal/runner|-test.run=^(TestStartHostSaysThePortIsTaken|TestConverseWithAProgramThatLeaves)$"
	"internal/cassette|-test.skip=^(TestModes|TestReplayProblems|TestCorruptCassettes)$"
	"internal/world|"
	"internal/atomicfile|"
	"examples|-test.skip=^TestExamplesAreProven$/^passthrough$"
	"internal/passthrough|"
	"internal/safeio|"
	"internal/mcpbridge|"
)
pkgs=()
for t in "${tests[@]}"; do pkgs+=("./${t%%|*}"); done

stamp "the test binaries of ${#pkgs[@]} packages (testing with Go's delete fallback)"
goroot=$(go env GOROOT)
cat >"$work/testing_wine.go" <<'GO'
//go:build windows

package testing

import "internal/syscall/windows"

// Wine 8 answers FileDispositionInformationEx "not implemented", which
// Go's Deleteat does not take for "unsupported": use its fallback.
func init() { windows.TestDeleteatFallback = true }
GO
printf '{"Replace":{"%s/src/testing/zz_wine_windows.go":"%s"}}\n' "$goroot" "$work/testing_wine.go" >"$work/overlay.json"
mkdir -p "$work/bin"
go test -trimpath -overlay "$work/overlay.json" -c -o "$work/bin/" "${pkgs[@]}"

# Two lanes of test binaries, each running its share one after another (the
# even places of the list and the odd ones, the list ordered so that they take
# about as long; Wine runs a test binary mostly on one core), each binary in
# its package directory; reported in the list's order.
mkdir -p "$work/out"
lane() { # FIRST: the tests at FIRST, FIRST+2, ...: output into out/INDEX.txt, "EXIT SECONDS" into out/INDEX.rc
	local i pkg t0 rc flags
	for ((i = $1; i < ${#tests[@]}; i += 2)); do
		pkg=${tests[$i]%%|*}
		read -ra flags <<<"${tests[$i]#*|}"
		t0=$SECONDS rc=0
		(cd "$pkg" && win "$work/bin/$(basename "$pkg").test.exe" "${flags[@]}") >"$work/out/$i.txt" 2>&1 || rc=$?
		echo "$rc $((SECONDS - t0))" >"$work/out/$i.rc"
	done
}
lane 0 &
even=$!
lane 1 &
odd=$!
wait "$even" "$odd"
failed=()
for i in "${!tests[@]}"; do
	pkg=${tests[$i]%%|*}
	read -r rc secs <"$work/out/$i.rc"
	if [ "$rc" = 0 ]; then
		echo "ok   $pkg ($secs s)"
	else
		tail -60 "$work/out/$i.txt"
		echo "FAIL $pkg ($secs s)"
		failed+=("$pkg")
	fi
done
stamp "done"
if [ ${#failed[@]} -gt 0 ]; then
	echo "under Wine: ${failed[*]} failed (above)" >&2
	exit 1
fi
