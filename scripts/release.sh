#!/usr/bin/env bash
# scripts/release.sh VERSION: every release artifact of this commit, into
# dist/ (git-ignored). It publishes nothing (docs/releasing.md: one command
# per registry). Two runs on one commit write the same bytes: CGO_ENABLED=0,
# -trimpath, -buildvcs=false and an empty build id; archives with sorted
# entries, owner 0 and every time SOURCE_DATE_EPOCH (default: the commit's
# time); SHA256SUMS lists them all.
#
#   dist/dryfire_VERSION_GOOS_GOARCH.tar.gz (.zip for windows)  the binary, README.md, CHANGELOG.md
#   dist/npm/*.tgz          dryfire, @firedrill/sdk and one @dryfire/cli-<platform>-<arch> per target
#   dist/python/*           one dryfire-sdk wheel per target (TAGS of dryfire_build.py) and the sdist
#   dist/sbom.cdx.json      CycloneDX SBOM of the binary's Go modules (cyclonedx-gomod, pinned)
#   dist/RELEASE_NOTES.md   the VERSION section of CHANGELOG.md
#   dist/SHA256SUMS         every file above
#
# VERSION must be the version the tree carries (internal/cli.Version,
# sdk/js/package.json and npm/*, sdk/python: X.Y.Z-dev there is X.Y.Z.dev0).
# DRYFIRE_TARGETS narrows the targets (GOOS/GOARCH, space-separated).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
version=${1:-}
if [ -z "$version" ] || [ $# -ne 1 ]; then
	echo "usage: scripts/release.sh VERSION (the version the tree carries, e.g. $(sed -n 's/^var Version = "\(.*\)"$/\1/p' internal/cli/cli.go))" >&2
	exit 2
fi
module=github.com/dryfire-dev/dryfire
targets=${DRYFIRE_TARGETS:-"darwin/arm64 darwin/amd64 linux/amd64 linux/arm64 windows/amd64"}
cyclonedx=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0

# The versions the tree carries must all be VERSION.
pyversion=$(echo "$version" | sed 's/-dev$/.dev0/; s/-rc\.\{0,1\}\([0-9]*\)$/rc\1/')
bad=""
[ "$(sed -n 's/^var Version = "\(.*\)"$/\1/p' internal/cli/cli.go)" = "$version" ] || bad+=" internal/cli/cli.go (Version)"
for f in sdk/js/package.json sdk/js/alias/package.json sdk/js/npm/*/package.json; do
	[ "$(node -p "require('./$f').version")" = "$version" ] || bad+=" $f"
done
grep -q "^export const SDK_VERSION = \"$version\";" sdk/js/src/engine.ts || bad+=" sdk/js/src/engine.ts (SDK_VERSION)"
grep -q "^version = \"$pyversion\"$" sdk/python/pyproject.toml || bad+=" sdk/python/pyproject.toml ($pyversion)"
grep -q "^VERSION = \"$pyversion\"$" sdk/python/tools/dryfire_build.py || bad+=" sdk/python/tools/dryfire_build.py ($pyversion)"
grep -q "^## $version\b" CHANGELOG.md || bad+=" CHANGELOG.md (a '## $version' section)"
if [ -n "$bad" ]; then
	echo "release: VERSION $version is not what these carry:$bad" >&2
	exit 2
fi

commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "release: the tree has changes that are not committed: the binaries say commit $commit+modified" >&2
	commit+="+modified"
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export CGO_ENABLED=0 TZ=UTC
dist=$root/dist
rm -rf "$dist"
mkdir -p "$dist/.build" "$dist/npm" "$dist/python"
stamp() { echo "-- $1 (at ${SECONDS}s)" >&2; }

# node names the targets its own way (process.platform-process.arch).
nodekey() {
	local os=${1%/*} arch=${1#*/}
	[ "$os" = windows ] && os=win32
	[ "$arch" = amd64 ] && arch=x64
	echo "$os-$arch"
}

# build TARGET: its binary, archive and wheel (files of its own: two builds
# run at once, the link and the packing of one beside the other's compile).
build() {
	local target=$1 goos=${1%/*} goarch=${1#*/} exe=dryfire out
	[ "$goos" = windows ] && exe=dryfire.exe
	out=$dist/.build/$(nodekey "$target")
	mkdir -p "$out"
	GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
		-ldflags "-s -w -buildid= -X $module/internal/cli.Version=$version -X $module/internal/cli.Commit=$commit" \
		-o "$out/$exe" ./cmd/dryfire
	python3 scripts/release_archive.py "$dist/dryfire_${version}_${goos}_${goarch}" "$out/$exe" README.md CHANGELOG.md
	python3 sdk/python/tools/dryfire_build.py --binary "$out/$exe" --target "$target" --out "$dist/python" >/dev/null
}
pids=()
for target in $targets; do
	while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
	stamp "building $target"
	(set -e; build "$target") &
	pids+=("$!")
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "release: a build failed (above)" >&2; exit 1; }
stamp "the Python sdist"
python3 sdk/python/tools/dryfire_build.py --sdist --out "$dist/python" >/dev/null

stamp "the npm packages"
if [ ! -x sdk/js/node_modules/typescript/bin/tsc ]; then
	(cd sdk/js && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)
fi
(cd sdk/js && node scripts/build.mjs && node scripts/pack.mjs --bins "$dist/.build" --out "$dist/npm" >/dev/null)

stamp "the SBOM ($cyclonedx)"
# From a clone of the commit: the generator reads its version from git,
# and cannot read a worktree's.
git clone -q --no-checkout "$root" "$dist/.build/src"
git -C "$dist/.build/src" checkout -q --detach "$(git rev-parse HEAD)"
(cd "$dist/.build/src" && go run "$cyclonedx" app -json -noserial -notimestamp -main cmd/dryfire -output "$dist/sbom.cdx.json" .)

stamp "the release notes"
awk -v v="$version" '$0 ~ "^## " { on = ($2 == v) } on' CHANGELOG.md >"$dist/RELEASE_NOTES.md"

rm -rf "$dist/.build"
(cd "$dist" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
stamp "done: $(wc -l <"$dist/SHA256SUMS") files in dist/, SHA256SUMS $(sha256sum "$dist/SHA256SUMS" | cut -c1-16)"
