# Sourced by the CI parts that drive a browser (20-js.sh, 50-browser.sh):
# Debian's chromium, installed when missing (CI runs as root). Playwright
# never downloads a browser.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if ! command -v chromium >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium >/dev/null; }
fi
CHROMIUM=$(command -v chromium)
export CHROMIUM
