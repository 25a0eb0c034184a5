#!/usr/bin/env bash
# The Python SDK (sdk/python, PyPI dryfire): build the Go binary as the wheel
# carries it (CGO_ENABLED=0, static), build the platform wheel with the SDK's
# own standard-library build backend, install it into a fresh virtual
# environment (.cache/python/venv, git-ignored) with only the pinned test
# packages of sdk/python/requirements-test.txt, and run the SDK's pytest
# suite there. The tests themselves run offline: every model call and tool
# is dryfire's. The LangGraph agent over MCP (langchain-mcp-adapters, which
# needs mcp<2) gets its few packages of sdk/python/requirements-mcp1.txt in
# a folder of their own (.cache/python/mcp1), first on its PYTHONPATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/.cache/python
python=${PYTHON:-python3}

rm -rf "$out/venv" "$out/dist" "$out/mcp1"
mkdir -p "$out/dist"
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o "$out/dryfire" ./cmd/dryfire
wheel=$("$python" sdk/python/tools/dryfire_build.py --binary "$out/dryfire" --out "$out/dist")
"$python" -m venv "$out/venv"
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
	-r sdk/python/requirements-test.txt
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-index --no-deps "$wheel"
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --target "$out/mcp1" \
	-r sdk/python/requirements-mcp1.txt

# The wheel's own binary is the one under test: no DRYFIRE_BIN, and the
# ecosystem's packages must not reach a network.
cd "$root/sdk/python"
env -u DRYFIRE_BIN DRYFIRE_TEST_WHEEL="$wheel" DRYFIRE_TEST_VENV="$out/venv" DRYFIRE_TEST_MCP1="$out/mcp1" \
	"$out/venv/bin/python" -m pytest -p no:cacheprovider -q tests
