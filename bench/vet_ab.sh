#!/usr/bin/env bash
# Compare the mapping times of two flashkit builds on a noisy machine (docs/reproduction/vet.md,
# "Mapping time"): `reproduce vet --workload W --scheme S` run alternately, A then B, PAIRS
# times, so that both see the same drift; prints, per workload, the median read and write
# means of each and the median of the paired read ratios B/A (below 1: B reads faster). A
# ratio within a few percent of 1 is noise on a shared VM. Every pair's means are kept in
# $OUT/means.tsv and every run's vet.json (with its machine line) under $OUT. SCALE sets
# --scale (default: the command's, 1/32); SCALE=1 is the paper's sizes, about 15 s a homes run.
#
#   bench/vet_ab.sh OLD_BINARY NEW_BINARY [PAIRS] [WORKLOADS] [SCHEME]
#   bench/vet_ab.sh /tmp/flashkit-main target/release/flashkit 12 homes,wdev "VET BIS PF"
#   SCALE=1 bench/vet_ab.sh /tmp/flashkit-main target/release/flashkit 4 wdev
#
# Needs jq. Copy the old build aside first (cp target/release/flashkit /tmp/flashkit-main).
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a=$1 b=$2 pairs=${3:-12} workloads=${4:-homes,wdev} scheme=${5:-VET BIS PF}
command -v jq > /dev/null || { echo "error: jq is needed to read vet.json" >&2; exit 2; }
for bin in "$a" "$b"; do
    [ -x "$bin" ] || { echo "error: $bin is not an executable flashkit" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "A: $a"
echo "B: $b"
scale=()
[ -n "${SCALE:-}" ] && scale=(--scale "$SCALE")
echo "$pairs pairs, workloads $workloads, scheme $scheme, scale ${SCALE:-default}; JSON under $out"
results=$out/means.tsv
: > "$results"
for i in $(seq "$pairs"); do
    for side in A B; do
        bin=$a
        [ "$side" = B ] && bin=$b
        dir=$out/$i$side
        "$bin" reproduce vet "${scale[@]}" --workload "$workloads" --scheme "$scheme" --out "$dir" \
            > /dev/null 2>&1 \
            || { echo "error: $bin failed; rerun it by hand to see why" >&2; exit 1; }
        jq -r --arg side "$side" --arg i "$i" \
            '.rows[] | [$i, $side, .workload, .read.mean_ns, .write.mean_ns] | @tsv' \
            "$dir/vet.json" >> "$results"
    done
done
awk -F'\t' '
    { key = $1 FS $3; read[$2, key] = $4; write[$2, key] = $5; names[$3] = 1; keys[key] = $3 }
    function median(list, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) {
            t = list[j]; list[j] = list[j - 1]; list[j - 1] = t
        }
        return n % 2 ? list[(n + 1) / 2] : (list[n / 2] + list[n / 2 + 1]) / 2
    }
    END {
        for (name in names) {
            n = 0
            for (key in keys) if (keys[key] == name) {
                n++
                ra[n] = read["A", key]; rb[n] = read["B", key]; ratio[n] = rb[n] / ra[n]
                wa[n] = write["A", key]; wb[n] = write["B", key]
            }
            printf "%-20s read A %.1f ns, B %.1f ns (medians); paired B/A %.3f; write A %.1f, B %.1f; %d pairs\n",
                name, median(ra, n), median(rb, n), median(ratio, n), median(wa, n), median(wb, n), n
        }
    }' "$results"
