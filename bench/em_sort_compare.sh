#!/usr/bin/env bash
# The external sort against STXXL and coreutils, side by side in one run: 2^LOG (default 2^28) random
# u64 keys (2 GiB) sorted with 512 MiB of memory on real files by
#   - flashkit em sort (reads of B_r = 128 KiB, writes of B_w = 16 MiB, O_DIRECT),
#   - STXXL 1.4.1's stxxl::sorter and stxxl::sort (Debian's libstxxl-dev, bench/stxxl_sort.cpp),
#   - coreutils sort on the same keys as zero-padded text lines (LC_ALL=C, -S 512M),
# with two bounds: the disk's O_DIRECT bandwidth (dd) and flashkit's
# in-memory radix sort of the whole input. Every output is compared with flashkit's.
#
# Needs: a release build of flashkit (built here), g++, libstxxl-dev (apt-get install
# libstxxl-dev), about 7 x the input size free in DIR for the binary runs and 2.5 x that
# again for the text one (set SKIP_TEXT=1 to skip it). Usage: bench/em_sort_compare.sh
# [LOG] with DIR=/some/tmp to choose where the files go (deleted afterwards).
set -euo pipefail
LOG=${1:-28}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${DIR:-$(mktemp -d /tmp/em-sort-bench.XXXXXX)}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
trap 'rm -rf "$DIR"' EXIT
MEM=512M
MEM_BYTES=$((512 << 20))
BYTES=$((8 << LOG))
# timed NAME CMD...: run CMD under /usr/bin/time, print its line and keep the wall time in
# $DIR/wall.NAME for the summary at the end.
timed() {
    local name=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$DIR/time.$name" "$@"
    read -r wall user sys rss < "$DIR/time.$name"
    echo "  (wall $wall s, user $user s, sys $sys s, max RSS $rss KiB)"
    echo "$wall" > "$DIR/wall.$name"
}

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(free -g | awk '/Mem/ {print $2}') GiB; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== files in $DIR ($(df -h "$DIR" | awk 'NR==2 {print $4}') free)"
(cd "$ROOT" && cargo build --release -q -p flashkit-cli)
FK="$ROOT/target/release/flashkit"
g++ -O3 -march=native -fopenmp -o "$DIR/stxxl_sort" "$ROOT/bench/stxxl_sort.cpp" -lstxxl -lpthread
echo "disk=$DIR/stxxl.disk,$((4 * BYTES / 1048576 + 1024))MiB,syscall unlink" > "$DIR/.stxxl"
export STXXLCFG="$DIR/.stxxl"

echo "== input: 2^$LOG random u64"
"$FK" em gen -o "$DIR/input" --records "2^$LOG" --record u64 --seed 1

echo "== disk bandwidth with O_DIRECT (dd, 16 MiB blocks, the input's size)"
DD_WRITE=$(dd if=/dev/zero of="$DIR/dd" bs=16M count=$((BYTES >> 24)) oflag=direct 2>&1 | tail -1)
DD_READ=$(dd if="$DIR/dd" of=/dev/null bs=16M iflag=direct 2>&1 | tail -1)
echo "$DD_WRITE"
echo "$DD_READ"
rm -f "$DIR/dd"

echo "== in-memory bound: flashkit's radix sort of the whole input in RAM"
"$FK" em sort --input "$DIR/input" --in-memory --record u64

echo "== flashkit em sort --memory $MEM --br 128K --bw 16M"
timed flashkit "$FK" em sort --input "$DIR/input" --output "$DIR/out.flashkit" --record u64 \
    --memory $MEM --br 128K --bw 16M --tmp "$DIR"

echo "== STXXL sorter, M = $MEM"
(cd "$DIR" && timed sorter ./stxxl_sort sorter input out.stxxl $MEM_BYTES)
cmp "$DIR/out.flashkit" "$DIR/out.stxxl" && echo "  output identical to flashkit's"
rm -f "$DIR/out.stxxl"

echo "== STXXL sort (stxxl::vector + stxxl::sort), M = $MEM"
(cd "$DIR" && timed sort ./stxxl_sort sort input out.stxxl $MEM_BYTES)
cmp "$DIR/out.flashkit" "$DIR/out.stxxl" && echo "  output identical to flashkit's"
rm -f "$DIR/out.stxxl" "$DIR/stxxl.disk"

if [ "${SKIP_TEXT:-0}" != 1 ]; then
    echo "== coreutils sort on the keys as 20-digit text lines, LC_ALL=C -S $MEM --parallel=$(nproc)"
    "$DIR/stxxl_sort" totext "$DIR/input" "$DIR/input.txt" 0
    rm -f "$DIR/input"
    LC_ALL=C timed coreutils sort -S $MEM --parallel="$(nproc)" -T "$DIR" -o "$DIR/out.txt" "$DIR/input.txt"
    rm -f "$DIR/input.txt"
    "$DIR/stxxl_sort" totext "$DIR/out.flashkit" "$DIR/out.flashkit.txt" 0
    cmp "$DIR/out.txt" "$DIR/out.flashkit.txt" && echo "  output identical to flashkit's"
fi

# The figures bench/RESULTS.md records: ratios of the wall times, and the disk bound (two
# reads and two writes of the input at this run's dd rates, one after the other).
seconds() { sed -E 's/.* copied, ([0-9.]+) s.*/\1/' <<< "$1"; }
echo "== summary"
awk -v f="$(cat "$DIR/wall.flashkit")" -v so="$(cat "$DIR/wall.sorter")" \
    -v st="$(cat "$DIR/wall.sort")" -v w="$(seconds "$DD_WRITE")" -v r="$(seconds "$DD_READ")" \
    -v cu="$(cat "$DIR/wall.coreutils" 2>/dev/null || echo 0)" 'BEGIN {
    bound = 2 * (w + r)
    printf "flashkit %.2f s; STXXL sorter %.2f s (%.2fx); STXXL sort %.2f s (%.2fx)", f, so, so / f, st, st / f
    if (cu > 0) printf "; coreutils %.1f s (%.1fx)", cu, cu / f
    if (bound > 0) printf "\ndisk bound %.2f s (flashkit at %.2fx of it)\n", bound, f / bound
    else printf "\ndisk bound: not measured (input under 16 MiB)\n"
}'
