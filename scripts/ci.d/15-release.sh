#!/usr/bin/env bash
# The release artifacts (scripts/release.sh, docs/releasing.md) of this
# commit (commit first: a clone of HEAD is what is built): two release
# runs from clones at two paths write the same SHA256SUMS (the second's
# compiles come from the Go build cache; -trimpath keeps paths out); npm, given every packed tarball,
# installs for each target (--os/--cpu) that target's platform package and
# no other; pip picks for each platform tag the wheel of its target (and
# none for a macOS older than the binaries run on); the linux/amd64 archive's
# binary says its version, commit and target; under qemu-user (Debian's
# qemu-user-static, installed when missing and CI runs as root) the
# linux/arm64 archive's binary runs the quickstart.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
version=$(sed -n 's/^var Version = "\(.*\)"$/\1/p' internal/cli/cli.go)
work=$(mktemp -d "${TMPDIR:-/tmp}/dryfire-release-XXXXXX")
trap 'rm -rf "$work"' EXIT
stamp() { echo "-- $1 (at ${SECONDS}s)"; }

# Both runs from clones of this commit (what a release is of), at two paths.
for run in a b; do
	stamp "scripts/release.sh $version in a clone ($run)"
	git clone -q "$root" "$work/$run"
	git -C "$work/$run" checkout -q --detach "$(git rev-parse HEAD)"
	(cd "$work/$run" && scripts/release.sh "$version")
done
if ! diff -u "$work/a/dist/SHA256SUMS" "$work/b/dist/SHA256SUMS"; then
	echo "two release runs of one commit differ (above)" >&2
	exit 1
fi
dist=$work/a/dist
echo "same SHA256SUMS: $(wc -l <"$dist/SHA256SUMS") files"

stamp "npm: each target gets its platform package and no other"
for key in darwin-arm64 darwin-x64 linux-arm64 linux-x64 win32-x64; do
	project=$work/npm-$key
	mkdir -p "$project"
	node - "$dist/npm" "$version" >"$project/package.json" <<'JS'
// A project depending on the packed dryfire and @firedrill/sdk, with the
// platform packages reached the way the registry would give them: as the
// optional dependencies of dryfire, here overridden to the tarballs.
const [dir, version] = process.argv.slice(2);
const overrides = {};
for (const key of ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "win32-x64"]) {
  overrides[`@dryfire/cli-${key}`] = `file:${dir}/dryfire-cli-${key}-${version}.tgz`;
}
const dependencies = { dryfire: `file:${dir}/dryfire-${version}.tgz`, "@firedrill/sdk": `file:${dir}/firedrill-sdk-${version}.tgz` };
console.log(JSON.stringify({ name: "select", private: true, dependencies, overrides }, null, 2));
JS
	(cd "$project" && npm install --os="${key%-*}" --cpu="${key#*-}" --offline --no-audit --no-fund --loglevel=error >/dev/null)
	got=$(cd "$project/node_modules/@dryfire" && echo *)
	if [ "$got" != "cli-$key" ]; then
		echo "npm install --os=${key%-*} --cpu=${key#*-}: installed @dryfire/{$got}, want cli-$key alone" >&2
		exit 1
	fi
	echo "--os=${key%-*} --cpu=${key#*-}: @dryfire/$got"
done

stamp "pip: each platform tag gets its target's wheel"
check_pip() { # check_pip TAG WANT (WANT: a wheel's file name, or "none")
	local d=$work/pip-$1
	if python3 -m pip download --quiet --disable-pip-version-check --no-index --find-links "$dist/python" \
		--only-binary=:all: --no-deps --platform "$1" --python-version 3.12 -d "$d" dryfire-sdk 2>/dev/null; then
		got=$(cd "$d" && echo *.whl)
	else
		got=none
	fi
	if [ "$got" != "$2" ]; then
		echo "pip download --platform $1: got $got, want $2" >&2
		exit 1
	fi
	echo "--platform $1: $got"
}
py=${version/-dev/.dev0}
w=dryfire_sdk-$py-py3-none
check_pip macosx_14_0_arm64 "$w-macosx_12_0_arm64.whl"
check_pip macosx_12_0_x86_64 "$w-macosx_12_0_x86_64.whl"
check_pip macosx_11_0_arm64 none
# pip --platform widens a macOS version to the older ones, but (pip 23) not
# a manylinux or musllinux one: the Linux tags are named as the wheels give them.
check_pip manylinux_2_17_x86_64 "$w-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
check_pip musllinux_1_1_x86_64 "$w-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
check_pip manylinux2014_aarch64 "$w-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl"
check_pip musllinux_1_1_aarch64 "$w-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl"
check_pip win_amd64 "$w-win_amd64.whl"

stamp "the linux/amd64 archive's binary"
mkdir -p "$work/amd64"
tar -xzf "$dist/dryfire_${version}_linux_amd64.tar.gz" -C "$work/amd64"
"$work/amd64/dryfire" version | tee "$work/version.txt"
grep -qx "dryfire $version" "$work/version.txt"
grep -qx "commit $(git rev-parse HEAD)" "$work/version.txt"
grep -qx "target linux/amd64" "$work/version.txt"

qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [ -z "$qemu" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	stamp "installing Debian's qemu-user-static (CI runs as root)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q qemu-user-static >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q qemu-user-static >/dev/null; } || true
	qemu=$(command -v qemu-aarch64-static || true)
fi
if [ -n "$qemu" ]; then
	stamp "linux/arm64 under $qemu: the quickstart"
	mkdir -p "$work/arm64"
	tar -xzf "$dist/dryfire_${version}_linux_arm64.tar.gz" -C "$work/arm64"
	"$qemu" "$work/arm64/dryfire" version | grep -qx "target linux/arm64"
	"$qemu" "$work/arm64/dryfire" run examples/quickstart --record none
else
	echo "-- linux/arm64: not run (no qemu-aarch64; Debian: apt-get install qemu-user-static)"
fi
stamp "done"
