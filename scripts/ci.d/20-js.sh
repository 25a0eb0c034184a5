#!/usr/bin/env bash
# The TypeScript SDK (sdk/js, npm dryfire) and its examples.
#
# 1. Build the dryfire binary and the SDK (ESM + CommonJS with
#    declarations), type-check and run the SDK's Vitest suite against that
#    binary (DRYFIRE_BIN). Pinned packages from sdk/js/package-lock.json go
#    into sdk/js/node_modules (git-ignored).
# 2. Pack the SDK, @firedrill/sdk (its alias) and this platform's package
#    holding that binary with npm pack, install only those tarballs (plus
#    the pinned runners of examples/ts-runners/package-lock.json) into a
#    temporary project, and run there, offline, the Vitest, Jest (the
#    ts-jest preset, as examples/ts-jest/package.json gives it) and
#    framework examples, each type-checked with tsc --strict against the
#    published declarations (examples/ts-vitest/test/note.test.ts is the
#    product note's example verbatim, with its @firedrill/sdk imports).
#    The examples find the binary through the platform package. The OpenAI
#    Agents SDK agent of examples/scripted-agents runs there too, on the
#    script model (as an agent.command case and in runDrills against
#    examples/world, which is copied beside it).
#    examples/ts-playwright runs there with @playwright/test on Debian's
#    chromium (lib/chromium.sh): the agent's web UI driven inside a drill,
#    its server reaching the world over the drill's HTTP binding.
# 3. From a fresh copy of the repository (scripts/fresh-copy.sh: what a
#    clone has, nothing built), `npm install ./sdk/js` into a scratch
#    project, as a user does before anything is published: its prepare
#    script builds dist/ and the binary; sdk/js/test/install runs one drill
#    there with node:test, no DRYFIRE_BIN; a later `npm install` there
#    builds nothing (prepare sees dist/ and the binary up to date), and one
#    after a source changed builds dist/ again.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/dryfire-js-XXXXXX")
trap 'rm -rf "$work"' EXIT
stamp() { echo "-- $1 (at ${SECONDS}s)"; }

stamp "building the dryfire binary"
go build -o "$work/dryfire" ./cmd/dryfire

cd "$root/sdk/js"
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
stamp "building the SDK"
npm run --silent build
npx --no-install tsc -p tsconfig.test.json
stamp "the SDK's tests"
DRYFIRE_BIN="$work/dryfire" npx --no-install vitest run

stamp "packing the SDK and this platform's @dryfire/cli-* package"
mapfile -t tarballs < <(node scripts/pack.mjs --bin "$work/dryfire" --out "$work/tarballs")
project="$work/project"
mkdir -p "$project"
cp "$root/examples/ts-runners/package.json" "$root/examples/ts-runners/package-lock.json" "$project/"
cd "$project"
stamp "installing the examples' runners and the tarballs"
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
npm install --prefer-offline --no-save --no-audit --no-fund --loglevel=error "${tarballs[@]}"
unset DRYFIRE_BIN
for example in ts-vitest ts-jest ts-framework ts-playwright; do
	[ -d "$root/examples/$example" ] || continue
	cp -R "$root/examples/$example" "$project/$example"
	rm -rf "$project/$example/node_modules"
done
cp -R "$root/examples/world" "$project/world"
mkdir -p "$project/scripted-agents"
cp -R "$root/examples/scripted-agents/openai-agents-js" "$project/scripted-agents/openai-agents-js"
rm -rf "$project/scripted-agents/openai-agents-js/node_modules" "$project/world/cassettes"

bin="$project/node_modules/.bin"
stamp "examples/ts-vitest"
(cd ts-vitest && "$bin/tsc" -p . && "$bin/vitest" run)
if [ -d ts-jest ]; then
	stamp "examples/ts-jest"
	(cd ts-jest && "$bin/tsc" -p . --noEmit && "$bin/jest" --ci)
fi
if [ -d ts-framework ]; then
	stamp "examples/ts-framework"
	(cd ts-framework && "$bin/tsc" -p . && "$bin/vitest" run)
fi
stamp "examples/scripted-agents/openai-agents-js"
(cd scripted-agents/openai-agents-js && "$bin/tsc" -p . && "$bin/vitest" run)

stamp "examples/ts-playwright (Debian's chromium)"
. "$root/scripts/ci.d/lib/chromium.sh"
(cd ts-playwright && "$bin/tsc" -p . && "$bin/playwright" test)

stamp "a fresh copy: npm install ./sdk/js into a scratch project, one runDrills"
bash "$root/scripts/fresh-copy.sh" "$work/clone"
mkdir -p "$work/scratch"
cd "$work/scratch"
printf '{"name": "scratch", "private": true, "type": "module"}\n' >package.json
cp "$root"/examples/minimal-world/notes.* "$root/sdk/js/test/install/install.test.mjs" .
npm install --prefer-offline --no-audit --no-fund --loglevel=error "$work/clone/sdk/js"
# npm 11.19+ warns of the SDK's prepare script until it is approved, by the
# name the README gives; after that, no install warns (issue 37: a later
# install named it after its folder, js@0.1.0-dev).
if node -e 'const [a, b] = process.argv[1].split(".").map(Number); process.exit(a > 11 || (a === 11 && b >= 19) ? 0 : 1)' "$(npm --version)"; then
	npm install-scripts approve dryfire
	warned=$(npm install --prefer-offline --no-audit --no-fund 2>&1 | grep 'install-scripts' || true)
	if [ -n "$warned" ]; then
		echo "a later npm install still warns of install scripts after 'npm install-scripts approve dryfire':" >&2
		echo "$warned" >&2
		exit 1
	fi
fi
env -u DRYFIRE_BIN node --test --test-reporter=spec install.test.mjs
stamp "a later npm install there: prepare builds nothing (dist/ and the binary are newer than their sources)"
built() { stat -c '%Y %n' "$work/clone/sdk/js/dist/esm/index.js" "$work/clone/sdk/js/dist/cjs/index.js" "$work/clone/sdk/js/npm/cli-linux-x64/bin/dryfire"; }
before=$(built)
npm install --prefer-offline --no-audit --no-fund --loglevel=error
if [ "$(built)" != "$before" ]; then
	echo "a later npm install built the SDK again:" >&2
	echo "$before" >&2
	built >&2
	exit 1
fi
touch "$work/clone/sdk/js/src/index.ts"
npm install --prefer-offline --no-audit --no-fund --loglevel=error
if [ "$(built | head -2)" = "$(echo "$before" | head -2)" ]; then
	echo "a source newer than dist/ did not build dist/ again" >&2
	exit 1
fi
stamp "done"
