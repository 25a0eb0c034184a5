#!/usr/bin/env bash
# Serving benchmarks of dryfire serve (issue 5), runnable by anyone with Go
# and util-linux's taskset on a machine with at least 2 cores:
#
#   bash bench/serve.sh            # from the repository root
#   DURATION=10s REPEAT=5 bash bench/serve.sh
#
# Each server (dryfire serve, then the bare net/http handler returning the
# same bytes) runs pinned to core 0 with GOMAXPROCS=1; the load client
# (bench/load: a closed loop, 8 connections, raw latencies) runs pinned to
# core 1. Each figure is the best of REPEAT runs (3), each of DURATION
# (5s) after WARMUP (1s): other work on the box only ever slows a run
# down, so the best run is the closest to what the server can do. The
# load average before the runs is printed with the table. Nothing is installed; everything is built into a temporary
# directory, which is removed at the end. Not run in CI.
set -euo pipefail

DURATION=${DURATION:-5s}
REPEAT=${REPEAT:-3}
WARMUP=${WARMUP:-1s}
CONNS=${CONNS:-8}
SERVER_CORE=${SERVER_CORE:-0}
LOAD_CORE=${LOAD_CORE:-1}

command -v taskset >/dev/null || { echo "bench/serve.sh needs taskset (util-linux)" >&2; exit 2; }
command -v go >/dev/null || { echo "bench/serve.sh needs go" >&2; exit 2; }
if [ "$(nproc --all)" -lt 2 ]; then
	echo "bench/serve.sh needs 2 cores (server on one, load on the other)" >&2
	exit 2
fi

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "building into $tmp ..." >&2
(cd "$root" && go build -o "$tmp/dryfire" ./cmd/dryfire && go build -o "$tmp/load" ./bench/load &&
	go build -o "$tmp/bare" ./bench/bare && go build -o "$tmp/setup" ./bench/setup)
"$tmp/setup" "$tmp/data"
cd "$tmp/data"

# start_dryfire ARGS...: dryfire serve ARGS on a free port, pinned; sets URL.
start_dryfire() {
	: >"$tmp/serve.err"
	CI= GOMAXPROCS=1 taskset -c "$SERVER_CORE" "$tmp/dryfire" serve "$@" --http 127.0.0.1:0 2>"$tmp/serve.err" &
	pids+=($!)
	server=$!
	for _ in $(seq 100); do
		URL=$(sed -n 's/^serving .* on \(http:\/\/[^:]*:[0-9]*\): .*/\1/p' "$tmp/serve.err")
		[ -n "$URL" ] && return
		sleep 0.05
	done
	cat "$tmp/serve.err" >&2
	exit 1
}

# start_bare ANSWER CONTENT-TYPE [FLAGS]: the bare handler; sets URL.
start_bare() {
	: >"$tmp/bare.out"
	GOMAXPROCS=1 taskset -c "$SERVER_CORE" "$tmp/bare" -body-file "$1" -content-type "$2" "${@:3}" >"$tmp/bare.out" &
	pids+=($!)
	server=$!
	for _ in $(seq 100); do
		URL=$(head -n1 "$tmp/bare.out")
		[ -n "$URL" ] && return
		sleep 0.05
	done
	exit 1
}

stop() {
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
}

# load NAME ARGS...: the load client, pinned, REPEAT times; prints the
# TSV line of the best run.
load() {
	local name=$1
	shift
	for _ in $(seq "$REPEAT"); do
		GOMAXPROCS=1 taskset -c "$LOAD_CORE" "$tmp/load" -tsv -name "$name" -c "$CONNS" -d "$DURATION" -warmup "$WARMUP" "$@"
	done | sort -t$'\t' -k2,2nr | sed -n 1p
}

results=()
# bench NAME TARGET CONTENT-TYPE BARE-FLAGS PATH DRYFIRE-ARGS -- LOAD-ARGS
bench() {
	local name=$1 target=$2 ctype=$3 bareflags=$4 path=$5
	shift 5
	local sargs=() largs=()
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	largs=("$@")
	echo "$name ..." >&2
	start_dryfire "${sargs[@]}"
	local d
	d=$(load "$name" -url "$URL$path" -save "$tmp/answer" "${largs[@]}")
	stop
	start_bare "$tmp/answer" "$ctype" $bareflags
	local b
	b=$(load "bare" -url "$URL$path" "${largs[@]}")
	stop
	results+=("$d	$(echo "$b" | cut -f2)	$target")
}

loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
args100='{"amount":100,"currency":"EUR","sku":"SKU-99","note":"deliver before noon"}'
bench "POST /tools/{name}, 1 rule" 30000 application/json "" /tools/lookup_order \
	tools1.dryfire.yaml -- -body '{"order_id":"A-991"}' -expect gold
bench "POST /tools/{name}, match at rule 100 of 100" 25000 application/json "" /tools/create_order \
	tools100.dryfire.yaml -- -body "$args100" -expect '\"rule\":99'
bench "MCP tools/call, 8 sessions (2025-11-25)" 25000 application/json -mcp /mcp \
	tools1.dryfire.yaml -- -mode mcp -tool lookup_order -args '{"order_id":"A-991"}' -expect gold
bench "MCP tools/call, stateless (2026-07-28)" 25000 application/json "" /mcp \
	tools1.dryfire.yaml -- -mode mcp2026 -tool lookup_order -args '{"order_id":"A-991"}' -expect gold
bench "replay 3-turn chat, JSON" 40000 application/json "" /v1/chat/completions \
	chat.dryfire.yaml --case chat-json --record none -- -mode seq -bodies chat-json.bodies.json -expect chatcmpl
bench "replay 3-turn chat, streamed (one write)" 40000 text/event-stream "" /v1/chat/completions \
	chat.dryfire.yaml --case chat-stream --record none -- -mode seq -bodies chat-stream.bodies.json -expect '[DONE]'
bench "replay 3-turn chat, streamed (--flush-events)" 40000 text/event-stream -flush-events /v1/chat/completions \
	chat.dryfire.yaml --case chat-stream --record none --flush-events -- -mode seq -bodies chat-stream.bodies.json -expect '[DONE]'

echo
echo "$(go version | cut -d' ' -f3-4), $(nproc --all) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d)"
echo "server on core $SERVER_CORE (GOMAXPROCS=1), load on core $LOAD_CORE, $CONNS connections, best of $REPEAT runs of $DURATION after $WARMUP; load average before: $loadavg"
echo
printf '| %-46s | %9s | %8s | %8s | %9s | %7s | %8s |\n' benchmark "req/s" "p50 µs" "p99 µs" "bare" "share" target
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..48})" "-----------:" "---------:" "---------:" "-----------:" "--------:" "---------:"
for r in "${results[@]}"; do
	IFS=$'\t' read -r name rps p50 p90 p99 n errs bare target <<<"$r"
	share=$(awk -v a="$rps" -v b="$bare" 'BEGIN { printf "%.0f %%", 100 * a / b }')
	mark="✓"
	awk -v a="$rps" -v t="$target" 'BEGIN { exit !(a < t) }' && mark="✗"
	printf '| %-46s | %9s | %8s | %8s | %9s | %7s | %6s %s |\n' "$name" "$rps" "$p50" "$p99" "$bare" "$share" "$target" "$mark"
done
