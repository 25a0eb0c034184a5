#!/usr/bin/env bash
# The existing HTTP agents of examples/http-agent: the Python one with its
# pinned requests (examples/http-agent/requirements.txt, installed into a
# fresh virtual environment, .cache/http-agents/venv, git-ignored) and the
# Node one with Node's own fetch, each run by dryfire against the refunds
# world imported from the example's OpenAPI document. Only REFUNDS_URL
# differs from their real-service configuration: dryfire sets it.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$PWD/.cache/http-agents
python=${PYTHON:-python3}

rm -rf "$out"
mkdir -p "$out"
go build -o "$out/dryfire" ./cmd/dryfire
"$python" -m venv "$out/venv"
"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r examples/http-agent/requirements.txt

export REFUNDS_URL=https://refunds.example.com/v1 # the real service's; each drill replaces it
PATH="$out/venv/bin:$PATH" "$out/dryfire" run examples/http-agent/python.dryfire.yaml --record none
"$out/dryfire" run examples/http-agent/node.dryfire.yaml --record none
