#!/usr/bin/env bash
# The Python SDK (sdk/python, PyPI dryfire-sdk): build the Go binary as the wheel
# carries it (CGO_ENABLED=0, static), build the platform wheel with the SDK's
# own standard-library build backend, install it into a fresh virtual
# environment (.cache/python/venv, git-ignored) with only the pinned test
# packages of sdk/python/requirements-test.txt, and run the SDK's pytest
# suite there (tests/test_coexistence.py installs that wheel beside a stand-in
# for PyPI's unrelated `dryfire` into a venv of its own). The tests themselves
# run offline: every model call and tool is dryfire's. The LangGraph agent
# over MCP (langchain-mcp-adapters, which needs mcp<2) gets its few packages
# of sdk/python/requirements-mcp1.txt in a folder of their own
# (.cache/python/mcp1), first on its PYTHONPATH; Google ADK (which pins
# google-genai<3) gets sdk/python/requirements-adk.txt's in .cache/python/adk,
# first on the ADK suites' PYTHONPATH.
# examples/own-tools (tests/test_own_tools.py): agents whose tools are their own
# functions, the LangGraph one over MCP on stdio with the mcp1 folder, run 5 times at each of
# -j 1 and -j 8.
# Then, from a fresh copy of the repository (scripts/fresh-copy.sh: what a
# clone has, nothing built), `pip install ./sdk/python` into a fresh virtual
# environment, as a user does before anything is published (the build
# backend builds the binary from the copy's Go source); then
# sdk/python/tests/install_check.py runs one drill there, no DRYFIRE_BIN.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/.cache/python
python=${PYTHON:-python3}

rm -rf "$out/venv" "$out/dist" "$out/mcp1" "$out/adk"
mkdir -p "$out/dist"
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o "$out/dryfire" ./cmd/dryfire
wheel=$("$python" sdk/python/tools/dryfire_build.py --binary "$out/dryfire" --out "$out/dist")
"$python" -m venv "$out/venv"
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
	-r sdk/python/requirements-test.txt
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-index --no-deps "$wheel"
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --target "$out/mcp1" \
	-r sdk/python/requirements-mcp1.txt
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --target "$out/adk" \
	-r sdk/python/requirements-adk.txt

# The wheel's own binary is the one under test: no DRYFIRE_BIN, and the
# ecosystem's packages must not reach a network.
cd "$root/sdk/python"
env -u DRYFIRE_BIN DRYFIRE_TEST_WHEEL="$wheel" DRYFIRE_TEST_VENV="$out/venv" DRYFIRE_TEST_MCP1="$out/mcp1" DRYFIRE_TEST_ADK="$out/adk" \
	"$out/venv/bin/python" -m pytest -p no:cacheprovider -q tests

echo "-- a fresh copy: pip install ./sdk/python into a fresh venv, one run_drills"
fresh=$(mktemp -d "${TMPDIR:-/tmp}/dryfire-python-XXXXXX")
trap 'rm -rf "$fresh"' EXIT
cd "$root"
bash scripts/fresh-copy.sh "$fresh/clone"
"$python" -m venv "$fresh/venv"
"$fresh/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "$fresh/clone/sdk/python"
mkdir -p "$fresh/scratch"
cp examples/minimal-world/notes.* "$fresh/scratch/"
(cd "$fresh/scratch" && env -u DRYFIRE_BIN "$fresh/venv/bin/python" "$root/sdk/python/tests/install_check.py")

# One SDK example on linux/arm64: the aarch64 wheel, installed as pip
# installs it for that platform (--platform, into a folder of its own, first
# on the example's PYTHONPATH), its own binary run under qemu-user
# (15-release.sh installs Debian's qemu-user-static) through DRYFIRE_BIN.
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [ -z "$qemu" ]; then
	echo "-- examples/pytest on linux/arm64: not run (no qemu-aarch64; Debian: apt-get install qemu-user-static)"
	exit 0
fi
cd "$root"
rm -rf "$out/arm64"
mkdir -p "$out/arm64/dist"
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -o "$out/arm64/dryfire" ./cmd/dryfire
"$python" sdk/python/tools/dryfire_build.py --binary "$out/arm64/dryfire" --target linux/arm64 --out "$out/arm64/dist" >/dev/null
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-index --no-deps \
	--find-links "$out/arm64/dist" --only-binary=:all: --platform manylinux2014_aarch64 --target "$out/arm64/site" dryfire-sdk
bin=$out/arm64/site/dryfire_sdk/_bin/dryfire
printf '#!/bin/sh\nexec %s %s "$@"\n' "$qemu" "$bin" >"$out/arm64/dryfire-qemu"
chmod +x "$out/arm64/dryfire-qemu"
"$out/arm64/dryfire-qemu" version | grep -qx "target linux/arm64"
echo "-- examples/pytest against the aarch64 wheel's binary under $qemu"
cd "$root/examples/pytest"
DRYFIRE_BIN="$out/arm64/dryfire-qemu" PYTHONPATH="$out/arm64/site" PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
	"$out/venv/bin/python" -m pytest -p dryfire_sdk.pytest_plugin -p no:cacheprovider -q
