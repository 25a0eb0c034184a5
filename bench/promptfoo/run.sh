#!/usr/bin/env bash
# dryfire run against promptfoo eval on the same 500 cases (issue 31's last
# row), whole CLI, start to exit:
#
#   bash bench/promptfoo/run.sh               # from anywhere
#   ROUNDS=9 STARTS=5 N=500 bash bench/promptfoo/run.sh
#
# The dryfire suite is bench/table's many.dryfire.yaml (go run ./bench/table
# -write-suites): each case a scripted agent making one tool call that a
# mock answers, judged by two checks (called with, output contains). The
# promptfoo config (gen.mjs) has the same cases: a local provider
# (provider.mjs) answers every prompt with a fixed assistant turn holding
# the tool call, judged by a javascript check of the call and a contains.
# promptfoo runs offline: telemetry, update checks, sharing, the cache and
# writing results and log files off, its config directory a temporary one
# (warmed by a first, untimed run). Both run with their default concurrency.
#
# Before timing, each tool runs its suite as is (all N must pass) and twice
# with one check changed (all N must fail), so both checks are evaluated.
# Then ROUNDS rounds, in an order that turns each round: STARTS runs of
# dryfire (the round's figure is their median) and one of promptfoo; every
# timed run's summary must say N passed. A round's ratio is promptfoo's
# time over dryfire's; the medians across rounds and the ranges are
# printed, with the load average before and after. promptfoo is installed
# from _npm/package-lock.json into bench/promptfoo/_npm/node_modules
# (git-ignored, about 1.4 GB). Not run in CI: too heavy.
set -euo pipefail

ROUNDS=${ROUNDS:-9}
STARTS=${STARTS:-5}
N=${N:-500}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
for c in go node npm; do
	command -v "$c" >/dev/null || { echo "bench/promptfoo/run.sh needs $c" >&2; exit 2; }
done

# _npm: a folder go ignores (promptfoo ships .go files; in a node_modules
# go can see, go vet ./... would build them).
npmdir=$here/_npm
pinned=$(node -p "require('$npmdir/package.json').dependencies.promptfoo")
installed=$(node -p "try { require('$npmdir/node_modules/promptfoo/package.json').version } catch { '' }")
if [ "$installed" != "$pinned" ]; then
	echo "installing promptfoo $pinned into $npmdir/node_modules ..." >&2
	(cd "$npmdir" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
pf=$npmdir/node_modules/.bin/promptfoo

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/pf" "$tmp/pfhome" "$tmp/controls"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/dryfire" ./cmd/dryfire)
(cd "$root" && go run ./bench/table -write-suites "$tmp")
dsuite=$tmp/many.dryfire.yaml
if [ "$N" != 500 ]; then
	echo "bench/promptfoo/run.sh: N must be 500 (bench/table's many.dryfire.yaml)" >&2
	exit 2
fi
node "$here/gen.mjs" "$tmp/pf" "$N"

export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1 \
	PROMPTFOO_DISABLE_REMOTE_GENERATION=1 PROMPTFOO_CONFIG_DIR=$tmp/pfhome NO_COLOR=1 \
	PROMPTFOO_DISABLE_DEBUG_LOG=1 PROMPTFOO_DISABLE_ERROR_LOG=1
# (Without the last two, promptfoo 0.121.20 writes a debug and an error log
# file a run, and about one run in five died at exit: "write after end".)
pfargs=(eval --no-cache --no-write --no-share --no-table --no-progress-bar)

# run_pf DIR OUT: promptfoo eval of DIR's config; prints milliseconds.
run_pf() {
	local t0 t1
	t0=$EPOCHREALTIME
	(cd "$1" && CI='' "$pf" "${pfargs[@]}" -c promptfooconfig.yaml >"$2" 2>&1) || true
	t1=$EPOCHREALTIME
	ms "$t0" "$t1"
}
# run_dry SUITE OUT: dryfire run of SUITE; prints milliseconds.
run_dry() {
	local t0 t1
	t0=$EPOCHREALTIME
	(cd "$tmp" && CI='' "$tmp/dryfire" run "$1" >"$2" 2>&1) || true
	t1=$EPOCHREALTIME
	ms "$t0" "$t1"
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) * 1000 }'; }
pf_says() { # OUT PASSED FAILED
	grep -q "[^0-9]$2 passed (" "$1" && grep -q "[^0-9]$3 failed (" "$1" && grep -q " 0 errors (" "$1"
}
dry_says() { grep -qx "$2 passed, $3 failed" "$1"; }
fail() {
	echo "bench/promptfoo/run.sh: $1; its output:" >&2
	tail -20 "$2" >&2
	exit 1
}

# Warm-up and the controls.
run_pf "$tmp/pf" "$tmp/out" >/dev/null
pf_says "$tmp/out" "$N" 0 || fail "promptfoo did not pass all $N cases" "$tmp/out"
run_dry "$dsuite" "$tmp/out" >/dev/null
dry_says "$tmp/out" "$N" 0 || fail "dryfire did not pass all $N cases" "$tmp/out"
for control in "silver A-991" "gold A-992"; do
	mkdir -p "$tmp/controls/pf"
	# shellcheck disable=SC2086
	node "$here/gen.mjs" "$tmp/controls/pf" "$N" $control
	run_pf "$tmp/controls/pf" "$tmp/out" >/dev/null
	pf_says "$tmp/out" 0 "$N" || fail "promptfoo with a check expecting ${control}: not all $N cases failed" "$tmp/out"
done
sed 's/contains: gold/contains: silver/' "$dsuite" >"$tmp/controls/a.dryfire.yaml"
sed 's/with: {order_id: A-991}/with: {order_id: A-992}/' "$dsuite" >"$tmp/controls/b.dryfire.yaml"
for f in a b; do
	run_dry "$tmp/controls/$f.dryfire.yaml" "$tmp/out" >/dev/null
	dry_says "$tmp/out" 0 "$N" || fail "dryfire with a check changed ($f): not all $N cases failed" "$tmp/out"
done
echo "controls: each tool passed all $N cases, and failed all $N with either check changed" >&2

before=$(cut -d' ' -f1-3 /proc/loadavg)
dry_ms=() pf_ms=() ratio=()
median() { tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for ((r = 0; r < ROUNDS; r++)); do
	d=() p=
	dry_round() {
		for ((i = 0; i < STARTS; i++)); do
			d+=("$(run_dry "$dsuite" "$tmp/out")")
			dry_says "$tmp/out" "$N" 0 || fail "dryfire did not pass all $N cases" "$tmp/out"
		done
	}
	pf_round() {
		p=$(run_pf "$tmp/pf" "$tmp/out")
		pf_says "$tmp/out" "$N" 0 || fail "promptfoo did not pass all $N cases" "$tmp/out"
	}
	if ((r % 2 == 0)); then dry_round; pf_round; else pf_round; dry_round; fi
	dm=$(echo "${d[*]}" | median)
	dry_ms+=("$dm") pf_ms+=("$p")
	ratio+=("$(awk -v a="$p" -v b="$dm" 'BEGIN { printf "%.1f", a / b }')")
	echo "round $((r + 1))/$ROUNDS: dryfire $dm ms (median of $STARTS), promptfoo $p ms, ${ratio[-1]}× (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
after=$(cut -d' ' -f1-3 /proc/loadavg)

row() { # NAME VALUES...
	local name=$1 unit=$2
	shift 2
	printf '| %s | %s%s (%s–%s) |\n' "$name" "$(echo "$*" | median)" "$unit" \
		"$(printf '%s\n' "$@" | sort -g | head -1)" "$(printf '%s\n' "$@" | sort -g | tail -1)"
}
echo
echo "$N cases (one tool call, two checks each), whole CLI, start to exit; $ROUNDS rounds, median (range)"
echo "promptfoo $pinned on node $(node --version), dryfire $("$tmp/dryfire" --version | cut -d' ' -f2) ($(cd "$root" && git rev-parse --short HEAD)), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load average before: $before, after: $after"
echo
echo "| run | time |"
echo "|---|---|"
row "\`dryfire run\` (median of $STARTS a round)" " ms" "${dry_ms[@]}"
row "\`promptfoo eval\`" " ms" "${pf_ms[@]}"
row "dryfire ÷ promptfoo (promptfoo's time over dryfire's, within a round)" "×" "${ratio[@]}"
