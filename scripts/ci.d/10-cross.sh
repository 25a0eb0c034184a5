#!/usr/bin/env bash
# Every release target compiles: the dryfire binary is built for each
# (CGO_ENABLED=0, as released), and go vet type-checks every package with
# its tests on each family of platform files that Linux does not use:
# darwin/arm64 (*_unix.go without *_linux.go; darwin/amd64 has the same
# files) and windows/amd64 (*_windows.go). Linux amd64 is the build the
# full suite runs (go test -race ./...). The compiled dependencies of each
# target stay in the Go build cache for the release part.
set -euo pipefail
cd "$(dirname "$0")/../.."
targets=${DRYFIRE_TARGETS:-"darwin/arm64 darwin/amd64 linux/amd64 linux/arm64 windows/amd64"}
vetted="darwin/arm64 windows/amd64"
for target in $targets; do
	t0=$SECONDS
	export GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0
	go build -trimpath -o /dev/null ./cmd/dryfire
	if [[ " $vetted " == *" $target "* ]]; then
		go vet ./...
	fi
	echo "-- $target: ok ($((SECONDS - t0)) s)"
done
