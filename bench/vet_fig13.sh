#!/usr/bin/env bash
# The paper's Fig. 13 (PD against PF VET, cache misses a request) by cache simulation: each
# `reproduce vet --workload W --scheme S` replay runs under valgrind's callgrind with its
# cache simulator, counting only inside the timed mapping calls, and the data-cache misses
# of the write updates and read translations are divided by their calls. The paper read
# hardware counters (PAPI) on a dual-core machine with a 4 MB cache; the simulated caches
# default to a 32 KiB 8-way L1 and a 4 MiB 16-way last level (D1 and LL, valgrind's
# --D1/--LL syntax: size,ways,line). Deterministic: the same build gives the same counts.
# Callgrind does not model prefetch instructions, so the replay's lookahead hints count for
# nothing here, as in the paper, which had none. About 25 s a run at the default scale.
#
#   bench/vet_fig13.sh [BINARY] [WORKLOADS] [SCHEMES]
#   bench/vet_fig13.sh target/release/flashkit finance,homes,wdev,wsf "VET BIS PD,VET BIS PF"
#   D1=32768,8,64 LL=4194304,16,64 SCALE=0.015625 OUT=results/fig13 bench/vet_fig13.sh
#
# Prints a markdown table; keeps every run's vet.json and callgrind file, and fig13.tsv, under
# $OUT (default: a new temporary directory). Needs valgrind, callgrind_annotate and jq.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
bin=${1:-target/release/flashkit}
workloads=${2:-finance,homes,wdev,wsf}
schemes=${3:-VET BIS PD,VET BIS PF}
d1=${D1:-32768,8,64}
ll=${LL:-4194304,16,64}
for tool in valgrind callgrind_annotate jq; do
    command -v "$tool" > /dev/null || { echo "error: $tool is needed" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "error: $bin is not an executable flashkit (cargo build --release)" >&2; exit 2; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
scale=()
[ -n "${SCALE:-}" ] && scale=(--scale "$SCALE")
echo "flashkit: $bin; D1 $d1, LL $ll; scale ${SCALE:-default}; files under $out" >&2

# Inclusive events of one timed call kind (update, translate) from a callgrind file, as
# "Ir D1mr D1mw DLmr DLmw" (the line of the function's own file: its entry, callees
# included).
events() {
    callgrind_annotate --inclusive=yes "$1" 2> /dev/null \
        | grep -E "mapping_time\.rs:<flashkit_sim::mapping_time::TimedMapping<M> as flashkit_ftl::mapping::Mapping>::$2( |$)" \
        | head -1 \
        | sed -E 's/\([^)]*\)//g; s/,//g' \
        | awk '{ for (i = 1; i <= 9; i++) if ($i == ".") $i = 0; print $1, $5, $6, $8, $9 }'
}

tsv=$out/fig13.tsv
printf 'workload\tscheme\tkind\tcalls\tinstructions\tl1_misses\tll_misses\n' > "$tsv"
IFS=, read -r -a ws <<< "$workloads"
IFS=, read -r -a ss <<< "$schemes"
for w in "${ws[@]}"; do
    for s in "${ss[@]}"; do
        tag=$w-${s// /-}
        valgrind --tool=callgrind --cache-sim=yes --D1="$d1" --LL="$ll" \
            --collect-atstart=no \
            --toggle-collect='<flashkit_sim::mapping_time::TimedMapping<M> as flashkit_ftl::mapping::Mapping>::*' \
            --callgrind-out-file="$out/$tag.callgrind" \
            "$bin" reproduce vet "${scale[@]}" --workload "$w" --scheme "$s" --out "$out/$tag" \
            > "$out/$tag.log" 2>&1 \
            || { echo "error: the run of $w $s failed; see $out/$tag.log" >&2; exit 1; }
        for kind in update translate; do
            key=write
            [ "$kind" = translate ] && key=read
            calls=$(jq --arg s "$s" ".rows[] | select(.scheme == \$s) | .$key.requests" "$out/$tag/vet.json")
            read -r ir d1r d1w llr llw <<< "$(events "$out/$tag.callgrind" "$kind")"
            [ -n "${llw:-}" ] || { echo "error: no $kind events in $out/$tag.callgrind" >&2; exit 1; }
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$s" "$key" "$calls" "$ir" \
                $((d1r + d1w)) $((llr + llw)) >> "$tsv"
        done
        echo "done: $w $s" >&2
    done
done

echo "| workload | scheme | kind | calls | instructions a call | L1 misses a call | LL misses a call |"
echo "|---|---|---|---|---|---|---|"
tail -n +2 "$tsv" | awk -F'\t' '{
    c = ($4 > 0) ? $4 : 1
    printf "| %s | %s | %s | %d | %.0f | %.2f | %.2f |\n", $1, $2, $3, $4, $5 / c, $6 / c, $7 / c
}'
