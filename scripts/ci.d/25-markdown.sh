#!/usr/bin/env bash
# The Markdown dryfire writes (dryfire compare --markdown, the job summary)
# rendered by cmark-gfm, GitHub's own renderer (Debian's cmark-gfm):
# names with Markdown and HTML in them render as their text, and tables
# stay tables. go test ./... skips these tests on a machine without
# cmark-gfm; here they must run. Installs it when missing (CI runs as
# root).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v cmark-gfm >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q cmark-gfm >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q cmark-gfm >/dev/null; }
fi
cmark-gfm --version | head -1
DRYFIRE_TEST_CMARK=1 go test -count=1 -run 'TestCompareMarkdownRenders|TestMarkdownEscapeRenders' -v ./report | grep -E '^(=== RUN|--- |PASS|FAIL|ok)'
