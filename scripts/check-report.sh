#!/usr/bin/env bash
# Open a flashkit HTML report in headless Chromium, as a reader's browser would, and save a
# screenshot of the whole page; also print the page's figure and table count as the browser
# sees them after its scripts ran.
#
#   scripts/check-report.sh results/sweep-gc/report.html report.png
#
# Needs Debian's chromium package (apt-get install chromium). The browser runs without
# network access or a profile of its own, so anything the page tried to fetch would be missing.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 REPORT.html [SCREENSHOT.png]" >&2
    exit 2
fi
html=$(realpath "$1")
out=${2:-report.png}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "chromium not found: install Debian's chromium package (apt-get install chromium)" >&2
    exit 2
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --hide-scrollbars --user-data-dir="$profile")

"$browser" "${flags[@]}" --window-size=1280,5200 --screenshot="$out" "file://$html" 2>/dev/null
dom=$("$browser" "${flags[@]}" --dump-dom "file://$html" 2>/dev/null)
figures=$(grep -o '<svg ' <<<"$dom" | wc -l)
rows=$(grep -o '<tr>' <<<"$dom" | wc -l)
echo "screenshot: $out"
echo "rendered figures (svg): $figures; table rows (header included): $rows"
