#!/usr/bin/env bash
# Every package compiles with its tests off Linux: go vet type-checks them
# on each family of platform files that Linux does not use:
# darwin/arm64 (*_unix.go without *_linux.go; darwin/amd64 has the same
# files) and windows/amd64 (*_windows.go). Linux amd64 is the build the
# full suite runs (go test -race ./...); 15-release.sh builds the binary
# of every target (the compiled dependencies of these two stay in the Go
# build cache for it).
set -euo pipefail
cd "$(dirname "$0")/../.."
for target in ${DRYFIRE_VET_TARGETS:-darwin/arm64 windows/amd64}; do
	t0=$SECONDS
	GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go vet ./...
	echo "-- go vet ./... for $target: ok ($((SECONDS - t0)) s)"
done
