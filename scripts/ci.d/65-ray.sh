#!/usr/bin/env bash
# ci: side
# Proof on Ray (issue 41): e2e/ray/driver.py starts a local Ray cluster (2
# CPUs), fans 1,000 cases out as Ray tasks through `dryfire run --list` and
# `--cases` batches, checks that `dryfire merge` of the batches is the
# single-process run's report byte for byte (durations aside), prints the
# figures (Ray vs `run -j 2`, Ray's overhead, the load average), then has 8
# Ray actors drive sessions of one `dryfire serve`, each in a world of its
# own. e2e/ray/openenv_check.py has openenv-core's own client drive an
# episode over the session WebSocket. e2e/ray/recipes_check.py validates the
# recipes of docs/ci/ (Kubernetes' schemas, the AWS Batch API's model) and
# runs each one's shard command as its platform would, merged and compared
# with the unsharded run. The packages are those of
# e2e/ray/requirements.txt, pinned, installed once into .cache/ray/venv
# (git-ignored) and kept while the file is unchanged.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$PWD/.cache/ray
python=${PYTHON:-python3}

if ! cmp -s e2e/ray/requirements.txt "$out/venv/requirements.txt"; then
	rm -rf "$out/venv"
	"$python" -m venv "$out/venv"
	"$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps -r e2e/ray/requirements.txt
	cp e2e/ray/requirements.txt "$out/venv/requirements.txt"
fi
go build -o "$out/dryfire" ./cmd/dryfire
work=$(mktemp -d "${TMPDIR:-/tmp}/dryfire-ray-XXXXXX")
trap 'rm -rf "$work"' EXIT

export CI=true RAY_USAGE_STATS_ENABLED=0
timeout 300 "$out/venv/bin/python" e2e/ray/driver.py --bin "$out/dryfire" --work "$work"
timeout 120 "$out/venv/bin/python" e2e/ray/openenv_check.py --bin "$out/dryfire"
mkdir "$work/recipes"
timeout 120 "$out/venv/bin/python" e2e/ray/recipes_check.py --bin "$out/dryfire" --work "$work/recipes"
