#!/usr/bin/env bash
# scripts/fresh-copy.sh DEST: the repository's files as a fresh clone has
# them (git's tracked files, as they are in the working tree; nothing
# git-ignored: no node_modules, dist/, .cache or built binaries), copied into
# DEST, for the install checks of scripts/ci.d/20-js.sh and 30-python.sh.
set -euo pipefail
dest=${1:?usage: scripts/fresh-copy.sh DEST}
cd "$(dirname "$0")/.."
mkdir -p "$dest"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# --ignore-failed-read: a tracked file deleted in the working tree is left out, as a commit would.
	git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$dest"
else
	tar --exclude-vcs --exclude-vcs-ignores -cf - . | tar -xf - -C "$dest"
fi
