#!/usr/bin/env bash
# Check the index page of `flashkit reproduce all` as a reader's browser shows it: open
# DIR/index.html in headless Chromium, save a screenshot, and check
#  - from the DOM the browser built (after the page's script ran) that the summary table of
#    the papers' claims is there, with a row a paper giving the claims that hold, hold in shape
#    only, do not hold and cannot be checked, equal to the counts of the paper's own claims
#    (flashkit's targets left out) in DIR/claims.json, which must also agree with the tally
#    claims.json gives each paper;
#  - that the screenshot is a PNG of the window's size, and not blank (a blank page of the
#    same size, taken the same way, compresses to a small fraction of it).
#
#   flashkit reproduce all --quick --out results     # or --only fast,grr: any subset
#   scripts/check-index-page.sh results              # screenshot in results/index.png
#   scripts/check-index-page.sh results shot.png
#
# Chromium is installed when it is missing (Debian's chromium package, with apt-get, through
# sudo when not root). Reading claims.json takes jq, or python3 when jq is missing; neither
# is installed here. Exit status 1 when a check fails, 2 for a usage or setup error.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [SCREENSHOT.png]   (DIR: the --out of flashkit reproduce all)" >&2
    exit 2
fi
dir=$1
html=$dir/index.html
claims=$dir/claims.json
for file in "$html" "$claims"; do
    if [ ! -f "$file" ]; then
        echo "$file: no such file (is $dir the --out of flashkit reproduce all?)" >&2
        exit 2
    fi
done
html=$(realpath "$html")
shot=${2:-$dir/index.png}
# The window, and so the screenshot: the title, the summary table and the first claims.
width=1280
height=1000

find_browser() {
    command -v chromium || command -v chromium-browser || command -v google-chrome || true
}
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
browser=$(find_browser)
if [ -z "$browser" ]; then
    if ! command -v apt-get >/dev/null; then
        echo "chromium not found, and no apt-get to install it with: install Chromium" >&2
        exit 2
    fi
    echo "== installing chromium (apt-get install -y chromium)"
    if ! { as_root apt-get update &&
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }; then
        echo "apt-get could not install chromium (see above)" >&2
        exit 2
    fi
    browser=$(find_browser)
    if [ -z "$browser" ]; then
        echo "apt-get installed chromium, but no chromium command is on the PATH" >&2
        exit 2
    fi
fi

# The counts a paper, from claims.json: "paper holds in-shape does-not-hold cannot-check",
# tab-separated, one line a paper in claims.json's order. `counted` counts the claims
# themselves; `tallied` is the tally claims.json gives each paper.
if command -v jq >/dev/null; then
    counted=$(jq -r '. as $doc | $doc.papers[] | .paper as $name
        | [$doc.claims[] | select(.paper == $name and .origin == "paper") | .verdict] as $v
        | [$name] + (["holds", "in-shape", "does-not-hold", "cannot-check"]
            | map(. as $k | $v | map(select(. == $k)) | length))
        | map(tostring) | @tsv' "$claims")
    tallied=$(jq -r '.papers[] | [.paper, .tally["holds", "in-shape", "does-not-hold",
        "cannot-check"]] | map(tostring) | @tsv' "$claims")
    before=$(jq -r '.papers[] | [.tally_before["holds", "in-shape", "does-not-hold",
        "cannot-check"]] | map(tostring) | join(" / ")' "$claims")
elif command -v python3 >/dev/null; then
    read_claims() {
        python3 - "$claims" "$1" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
keys = ["holds", "in-shape", "does-not-hold", "cannot-check"]
for paper in doc["papers"]:
    name = paper["paper"]
    if sys.argv[2] == "counted":
        verdicts = [c["verdict"] for c in doc["claims"]
                    if c["paper"] == name and c["origin"] == "paper"]
        counts = [verdicts.count(k) for k in keys]
    elif sys.argv[2] == "before":
        print(" / ".join(str(paper["tally_before"][k]) for k in keys))
        continue
    else:
        counts = [paper["tally"][k] for k in keys]
    print("\t".join([name] + [str(n) for n in counts]))
EOF
    }
    counted=$(read_claims counted)
    tallied=$(read_claims tallied)
    before=$(read_claims before)
else
    echo "reading $claims takes jq or python3, and neither is here" >&2
    exit 2
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --hide-scrollbars --user-data-dir="$profile" --window-size=$width,$height)
"$browser" "${flags[@]}" --screenshot="$shot" "file://$html" 2>/dev/null
dom=$("$browser" "${flags[@]}" --dump-dom "file://$html" 2>/dev/null)
blank=$profile/blank.png
"$browser" "${flags[@]}" --screenshot="$blank" "data:text/html,<body></body>" 2>/dev/null

failed=0
fail() {
    echo "FAILED: $*" >&2
    failed=1
}

# The summary: the first table after the claims' heading, a line a row, cells tab-separated.
flat=$(tr -d '\n' <<<"$dom")
heading="<h2>The papers('|&#39;) claims</h2>"
if ! grep -Eq "$heading" <<<"$flat"; then
    fail "the rendered page has no \"The papers' claims\" heading"
    rows=""
else
    rows=$(sed -E "s@.*$heading@@; s@</table>.*@@" <<<"$flat" \
        | sed -E 's#<tr[^>]*>#\n#g' | tail -n +2 \
        | sed -E 's#</t[dh]>#\t#g; s#<[^>]*>##g; s#\t$##')
fi
header=$(head -n 1 <<<"$rows")
expected_header=$(printf 'paper\tholds\tin shape only\tdoes not hold\tcannot be checked here\t%s' \
    'before the fidelity work: holds / in shape / does not / cannot')
if [ "$header" != "$expected_header" ]; then
    fail "the summary table's header is \"$header\", not \"$expected_header\""
fi
shown=$(tail -n +2 <<<"$rows")
# Each row: the counts, then the tally before the fidelity work (claims.json's tally_before).
expected_rows=$(paste <(echo "$counted") <(echo "$before"))
if [ "$shown" != "$expected_rows" ]; then
    fail "the summary table does not give claims.json's counts and tallies before"
    diff <(echo "$expected_rows") <(echo "$shown") | sed 's/^/  /' >&2 || true
fi
if [ "$tallied" != "$counted" ]; then
    fail "claims.json's tallies are not the counts of its claims"
    diff <(echo "$counted") <(echo "$tallied") | sed 's/^/  /' >&2 || true
fi
papers=$(grep -c . <<<"$counted" || true)
if [ "$papers" -eq 0 ]; then
    fail "claims.json names no paper"
fi

# The screenshot: a PNG (its signature), of the window's size (IHDR's width and height,
# big-endian at bytes 16-23), and more than blank.
size_of() {
    local b
    read -r -a b < <(od -An -tu1 -j16 -N8 "$1")
    echo "$(((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]))x$(((b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7]))"
}
if [ ! -s "$shot" ]; then
    fail "no screenshot was written to $shot"
elif [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]; then
    fail "$shot is not a PNG"
else
    got=$(size_of "$shot")
    if [ "$got" != "${width}x$height" ]; then
        fail "$shot is $got, not the window's ${width}x$height"
    fi
    bytes=$(wc -c <"$shot")
    blank_bytes=$(wc -c <"$blank")
    if [ "$bytes" -lt $((4 * blank_bytes)) ]; then
        fail "$shot looks blank: $bytes bytes, against $blank_bytes for a blank page"
    fi
fi

echo "summary table as rendered (claims.json: $papers papers):"
sed 's/^/  /' <<<"$rows"
if [ -s "$shot" ]; then
    echo "screenshot: $shot ($(size_of "$shot"), $(wc -c <"$shot") bytes; a blank page: $(wc -c <"$blank") bytes)"
fi
if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "ok: the summary table gives claims.json's counts for every paper"
