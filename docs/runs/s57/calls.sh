# The fifty-seventh session's device calls, on an H100. Call 1 ran as planned; the A/B points of 2-4 ran as c2_call.sh to
# c4_call.sh (c3 ran `calls.sh 4`), plus b72; the profile of 2 and all of 5 did not run. From the repository root, after:
#   cp docs/runs/s57/*.patch cookbook/patches/ && bash cookbook/patches/ab.sh prepare down3 untiles256 &&
#   rm -rf scratch/ab_old && mkdir -p scratch/ab_old &&
#   git archive 40ab508 | tar -x -C scratch/ab_old --exclude=docs && echo 40ab508 > scratch/ab_old/COMMIT
# run(command="bash docs/runs/s57/calls.sh N", carry=["shared", "scratch"], kind="nvidia-h200"):
#   1 (~6 min): b1 at today's code (main) against 40ab508 (old): 20b both orders, 120b one order
#   2 (~7 min): the 20b step's profile at b1 and b64, then main against down3 at 20b b64 (one order)
#   3 (~6 min): down3 at 20b b96 and b80 (one order each)
#   4 (~6 min): the second orders of b64 and b96
#   5 (~7 min): 120b b256 at main against untiles256 (tiles256, 7a9821c, undone), one order
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u
only() {  # only TREE...: leave the other prepared trees out of ab.sh's list (this machine's copy only)
    for d in scratch/ab_*/; do t=$(basename "$d" | cut -c4-); [ -f "$d/COMMIT" ] && mv "$d/COMMIT" "$d/COMMIT.off"
        for k in main "$@"; do [ "$t" = "$k" ] && mv "$d/COMMIT.off" "$d/COMMIT"; done; done; }
case "${1:-}" in
    1) only old; OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:1
       OUT=$OUT/r3 bash cookbook/patches/ab.sh run 120b:1 ;;
    2) timeout -k 5 240 python cookbook/profile_step.py --model 20b --batch 1 64 --out "$OUT/profile_20b.json" 2>&1 \
         | tr '\r' '\n' | grep -v '^\s*$' | tail -60 > "$OUT/profile.txt"; grep -A9 '^==' "$OUT/profile.txt"
       only down3; OUT=$OUT bash cookbook/patches/ab.sh run 20b:64 ;;
    3) only down3; OUT=$OUT bash cookbook/patches/ab.sh run 20b:96 20b:80 ;;
    4) for b in 64 96; do for t in down3 main; do  # ab.sh's second order by hand: the patch first
           (cd scratch/ab_$t && ln -sfn "$(cd ../.. && pwd)/shared" shared && timeout 300 python cookbook/bench_decode.py \
               --model 20b --batch $b --tokens 1000 --runs 3 --commit "$(cat COMMIT)" \
               --out "$OUT/ab_${t}_20b_b$b.jsonl" 2>&1 | tail -1 | sed "s/^/$t /"); done; done ;;
    5) only untiles256; OUT=$OUT bash cookbook/patches/ab.sh run 120b:256 ;;
    *) echo "usage: calls.sh 1|2|3|4|5"; exit 2 ;;
esac
date -u
