# The sixty-first session's device calls (run(..., carry=["shared", "scratch"])). Trees, from the repository root:
#   bash cookbook/patches/ab.sh prepare   (scratch/ab_main: HEAD) and
#   rm -rf scratch/ab_s60 && mkdir -p scratch/ab_s60 && git archive 4bbd635 | tar -x -C scratch/ab_s60 --exclude=docs &&
#   echo 4bbd635 > scratch/ab_s60/COMMIT   (the session's start; scratch/ab_old: d9cb215, for s57's plan on an H200)
# Calls are numbered as docs/runs/s61/cN/ (call 1, naming nvidia-h200, got no machine):
#   call 2 = `calls.sh 1`: the changed kernel's and engine's GPU tests at HEAD, then 20b b64 (greedy b64 samples
#      with _sample_kernel, whose key now mixes the seed's high half) main against s60, main first
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u
only() {  # only TREE...: leave the other prepared trees out of ab.sh's list (this machine's copy only)
    for d in scratch/ab_*/; do t=$(basename "$d" | cut -c4-); [ -f "$d/COMMIT" ] && mv "$d/COMMIT" "$d/COMMIT.off"
        for k in main "$@"; do [ "$t" = "$k" ] && [ -f "$d/COMMIT.off" ] && mv "$d/COMMIT.off" "$d/COMMIT"; done; done; }
case "${1:-}" in
    1) ln -sfn "$(pwd)/shared" scratch/ab_main/shared
       (cd scratch/ab_main && timeout 220 python -m pytest -q -x tests/test_kernels.py tests/test_engine.py -k \
           "sample or topk or moe_route or own_checked or bad_input or cpu_without or seeded or dummy_20b_same" \
           > "$OUT/pytest.log" 2>&1); tail -3 "$OUT/pytest.log"
       only s60; OUT=$OUT bash cookbook/patches/ab.sh run 20b:64 ;;
    *) echo "usage: calls.sh 1"; exit 2 ;;
esac
date -u
# call 3 (as run, on the H200 that call 2 started): scratch/ab_two = scratch/ab_main with ops.down_splits'
#   3-split line replaced by `pass` (20b 80-100 tokens back at 2 K splits); then
#   OUT=$PWD/scratch/out (so its files stayed on the machine: c3/output.txt is its printed tail);
#   rm -f scratch/ab_s60/COMMIT scratch/ab_old/COMMIT; OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:96;
#   OUT=$OUT/r3 bash cookbook/patches/ab.sh run 20b:80
# calls 4-9 (as run, warm on that H200): s44_next_calls.sh 1 (c4), 2 (c5); s57/next_calls.sh 2 (c6); s44_next_calls.sh 3
#   (c7); after `cp docs/runs/s57/untiles256.patch cookbook/patches/ && ab.sh prepare untiles256`: ab.sh run 120b:256
#   (c8); bench_decode.py --model 120b --batch 8 --tokens 1000 --runs 3 --commit 29f6302 (c9)
# call 10 (an H100, 26db5f6): pytest -q -x tests/test_kernels.py -k "mutation_of_kernels or sample_strips or
#   filters_are_exact or topk_ties" (c10/output.txt)
