#!/usr/bin/env bash
# The page-FTL replay benchmark (flashkit bench): 10 million uniform random 4 KiB writes over a
# 16 GiB logical space with 7% over-provisioning, read from the binary format, on a
# preconditioned (full, garbage-collecting) drive. Runs it RUNS times (default 5) and prints
# every run's figures and the median, then an exact instruction count of a small run that
# load on the machine cannot distort.
#
#   bench/page-ftl.sh            # from the repository root
#   RUNS=9 bench/page-ftl.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
trace=${TRACE:-/tmp/flashkit-bench-10m.fkt}

cargo build --release -q -p flashkit-cli
bin=target/release/flashkit
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD)"
if [ ! -f "$trace" ]; then
    "$bin" bench --keep-trace "$trace" --requests 10M --capacity 16G > /dev/null
fi
rates=()
for i in $(seq "$runs"); do
    out=$("$bin" bench --trace "$trace" --requests 10M --capacity 16G)
    rate=$(sed -n 's/^host page writes\/s: *//p' <<<"$out")
    rss=$(sed -n 's/^peak RSS: *//p' <<<"$out")
    wa=$(sed -n 's/^write amplification: *//p' <<<"$out")
    hash=$(sed -n 's/^state hash: *//p' <<<"$out")
    echo "run $i: $rate host page writes/s, WA $wa, peak RSS $rss, state hash $hash"
    rates+=("$rate")
done
median=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "median: $median host page writes/s over $runs runs"

if command -v valgrind > /dev/null; then
    small=/tmp/flashkit-bench-400k.fkt
    [ -f "$small" ] || "$bin" trace gen --workload uniform --size 4K --requests 400k --capacity 256M \
        --read-fraction 0 --trim-fraction 0 -o "$small" > /dev/null
    instructions=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" bench --trace "$small" \
        --requests 400k --capacity 256M 2>&1 | sed -n 's/.*Collected : //p')
    echo "instructions (callgrind, 400k writes on 256 MiB, precondition included): $instructions"
fi
