#!/usr/bin/env bash
# A/B of main against each prepared patch. Two steps, both from the repository root:
#   bash cookbook/patches/ab.sh prepare [NAME ...] here (needs git): scratch/ab_main and scratch/ab_NAME per patch
#                                                  (every one, or those named), from HEAD by git archive (docs left
#                                                  out), each patch applied
#   bash cookbook/patches/ab.sh run [--tests] [--both] [POINT ...]   on the device machine (carry "shared" and
#                                                  "scratch"): POINT = model:batch, or ttft:LEN, pause:LEN, many:SLOTS
#                                                  (below; 20b, or @model after it: ttft:122880@120b);
#                                                  --tests: each patch's GPU tests first; --both: every point twice,
#                                                  main first into $OUT/r1, then the patches first into $OUT/r2
# run: the tests (up to 4 minutes a patch, as 2 cut them off while compiling: a wrong kernel is not worth timing),
# then cookbook/bench_decode.py per
# point (median of 3 processes), the trees in turn; $OUT/ab_TREE_MODEL_bBATCH.jsonl, one printed line per run.
# A point costs ~40 s a tree at 20b b1, ~80 s at 20b b64, ~100 s at 120b b1 (eighteenth session), and a call
# may run 10 minutes: with 3 trees, `run --tests 20b:1` in one call, `run 20b:64 120b:1` in the next.
set -uo pipefail; shopt -s nullglob  # no patch left: main alone
R=$(pwd); OUT=${OUT:-$R/scratch/ab_out}
if [ "${1:-}" = prepare ]; then
    shift; trees=(main "$@")
    [ $# -gt 0 ] || for p in cookbook/patches/*.patch; do trees+=("$(basename "$p" .patch)"); done
    for d in scratch/ab_*/; do [ -f "$d/COMMIT" ] && rm -rf "$d"; done  # the trees of an earlier prepare
    for t in "${trees[@]}"; do
        rm -rf "scratch/ab_$t" && mkdir -p "scratch/ab_$t"
        git archive HEAD | tar -x -C "scratch/ab_$t" --exclude=docs
        git rev-parse --short HEAD | sed "s/\$/+$t/" > "scratch/ab_$t/COMMIT"
        if [ "$t" != main ]; then git apply --directory="scratch/ab_$t" "cookbook/patches/$t.patch" || exit 1; fi
    done
    exit 0
fi
[ "${1:-}" = run ] || { echo "usage: ab.sh prepare | run [--tests] [--both] [model:batch ...]"; exit 2; }
shift
tests=0; both=0
while [[ ${1:-} == --* ]]; do
    case $1 in --tests) tests=1 ;; --both) both=1 ;; *) echo "unknown option $1"; exit 2 ;; esac; shift
done
mkdir -p "$OUT"
trees=(main); rev=(main)  # main first (and last in the reversed order)
for d in scratch/ab_*/; do
    t=$(basename "$d" | cut -c4-); [ -f "$d/COMMIT" ] && [ "$t" != main ] && trees+=("$t") && rev=("$t" "${rev[@]}")
done
for t in "${trees[@]}"; do
    ln -sfn "$R/shared" "scratch/ab_$t/shared"
    [ "$t" = main ] || [ $tests = 0 ] && continue
    (cd "scratch/ab_$t" && timeout 240 python -m pytest -q -x tests/test_engine.py tests/test_kernels.py \
        -k "moe or route or attention or appended or batch_1_and_64 or greedy_float32" > "$OUT/ab_${t}_pytest.log" 2>&1)
    echo "$t pytest: $(tail -1 "$OUT/ab_${t}_pytest.log")"
done
points=("$@")
bench_all() {  # bench_all DIR TREE ...: every point, the trees in the order given
    local dir=$1 p m t bench; shift; mkdir -p "$dir"
    for p in "${points[@]}"; do
        m=20b; [[ $p == *@* ]] && { m=${p##*@}; p=${p%@*}; }  # ttft:LEN@120b: a long point on another model
        case "${p%%:*}" in  # ttft:LEN, pause:LEN and many:SLOTS run cookbook/bench_long.py (one run each)
            ttft|pause) bench=(cookbook/bench_long.py "${p%%:*}" --model "$m" --lengths "${p##*:}") ;;
            many) bench=(cookbook/bench_long.py many --model "$m" --max-slots "${p##*:}") ;;
            *) m=; bench=(cookbook/bench_decode.py --model "${p%%:*}" --batch "${p##*:}" --tokens 1000 --runs 3) ;;
        esac
        for t in "$@"; do
            (cd "scratch/ab_$t" && timeout 300 python "${bench[@]}" --commit "$(cat COMMIT)" \
                --out "$dir/ab_${t}_${p%%:*}${m:+_$m}_b${p##*:}.jsonl" 2>&1 | tail -1 | sed "s/^/$t /")
        done
    done
}
if [ $both = 0 ]; then bench_all "$OUT" "${trees[@]}"; exit; fi
bench_all "$OUT/r1" "${trees[@]}"
echo "-- the patches first"
bench_all "$OUT/r2" "${rev[@]}"
