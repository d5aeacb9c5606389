#!/usr/bin/env bash
# Mutation testing with cargo-mutants: does a test fail when the code is changed?
#
#   scripts/mutants.sh                      # the lines a change touches: committed since
#                                           # main, and uncommitted (the contributor's check)
#   scripts/mutants.sh --base origin/main   # against another base
#   scripts/mutants.sh -p flashkit-device   # a whole crate (hours for the large ones; see
#                                           # docs/TESTING.md for the scores and timings)
#   scripts/mutants.sh -f crates/flashkit-ftl/src/page/blocks.rs   # one file
#   scripts/mutants.sh --base 3e24555 -p flashkit-ftl   # a crate's lines changed since a
#                                           # commit (an earlier run's): with --base, -p and
#                                           # -f narrow the diff instead of taking all
#
# Further arguments go to cargo-mutants (`--shard 1/4`, `-j 2`, `--list`). Settings and the
# mutants skipped as equivalent, each with its reason, are in .cargo/mutants.toml. Results:
# target/mutants/mutants.out/ (missed.txt, caught.txt, timeout.txt, unviable.txt,
# outcomes.json). Exit status: 0 when every mutant tested was caught (or unviable), 2 when
# some were missed, 3 on a timeout, as cargo-mutants says.
set -euo pipefail
cd "$(dirname "$0")/.."

version=27.1.0
if ! cargo mutants --version 2>/dev/null | grep -q "$version"; then
    echo "== installing cargo-mutants $version (once)"
    cargo install cargo-mutants --locked --version "$version"
fi
# .cargo/mutants.toml runs each mutant's tests with cargo-nextest.
if ! cargo nextest --version >/dev/null 2>&1; then
    echo "== installing cargo-nextest (once)"
    cargo install cargo-nextest --locked
fi

base=main
args=()
whole=false
explicit_base=false
while [ $# -gt 0 ]; do
    case "$1" in
        --base) base=$2; explicit_base=true; shift 2 ;;
        -p|--package|-f|--file) whole=true; args+=("$1" "$2"); shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done

mkdir -p target/mutants
if [ "$whole" = false ] || [ "$explicit_base" = true ]; then
    diff=target/mutants/change.diff
    git diff "$(git merge-base "$base" HEAD)" -- 'crates/*.rs' > "$diff"
    if [ ! -s "$diff" ]; then
        echo "no Rust source changed since $base: nothing to mutate"
        exit 0
    fi
    echo "== mutants of the lines changed since $base ($(grep -c '^+[^+]' "$diff") added lines)"
    args+=(--in-diff "$diff")
fi
# The quick suite (a prefix of the heaviest randomized tests' seeds and geometries; see
# docs/TESTING.md): whatever it catches, the full suite catches too, so a score measured
# with it is a lower bound, at a quarter of the time a mutant.
export FLASHKIT_QUICK_TESTS=1
exec cargo mutants --output target/mutants "${args[@]}"
