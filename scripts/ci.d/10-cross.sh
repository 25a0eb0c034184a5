#!/usr/bin/env bash
# Every package compiles with its tests off Linux. go vet type-checks every
# package (with its tests) on each family of platform files that Linux does
# not use: darwin/arm64 (*_unix.go without *_linux.go; darwin/amd64 has the
# same files) and windows/amd64 (*_windows.go). Then, for each non-Linux
# target, every test binary is compiled and linked (go test -exec=true: the
# binary is built as go test -c builds it, and "run" by true, so nothing of
# another OS runs here; -count=1 so none is skipped as cached): darwin/arm64
# and windows/amd64 — darwin/amd64 compiles the very files darwin/arm64
# does, so linking its 40-odd test binaries again bought nothing but about
# a third of this part's time (15-release.sh still builds and packs its
# binary; DRYFIRE_TESTC_TARGETS names more targets). Linux amd64
# is the build the full suite runs (go test -race ./...); 15-release.sh
# builds the binary of every target with -trimpath, as these do, so that
# their compiled packages in the Go build cache are its (a darwin/arm64
# release build after them: 1 s instead of 32 s with a cold cache).
set -euo pipefail
cd "$(dirname "$0")/../.."
for target in ${DRYFIRE_VET_TARGETS:-darwin/arm64 windows/amd64}; do
	t0=$SECONDS
	GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go vet -trimpath ./...
	echo "-- go vet ./... for $target: ok ($((SECONDS - t0)) s)"
done
for target in ${DRYFIRE_TESTC_TARGETS:-darwin/arm64 windows/amd64}; do
	t0=$SECONDS
	out=$(GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go test -trimpath -exec=true -vet=off -run='^$' -count=1 ./... 2>&1) || {
		echo "$out" >&2
		echo "-- the test binaries for $target: FAILED" >&2
		exit 1
	}
	n=$(grep -c '^ok ' <<<"$out" || true)
	echo "-- the test binaries for $target: $n compiled and linked ($((SECONDS - t0)) s)"
done
