# The fifty-seventh session's plan for the next session with device time, in order. From the repository root, after:
#   cp docs/runs/s57/untiles256.patch cookbook/patches/ && bash cookbook/patches/ab.sh prepare untiles256 &&
#   rm -rf scratch/ab_old && mkdir -p scratch/ab_old &&
#   git archive d9cb215 | tar -x -C scratch/ab_old --exclude=docs && echo d9cb215 > scratch/ab_old/COMMIT
# run(command="bash docs/runs/s57/next_calls.sh N", carry=["shared", "scratch"], kind="nvidia-h200"):
#   1 (~6 min, H200): 20b b80 and b96 at main (3 down splits from 80 tokens, 13e1746) against d9cb215 (2), both
#     orders at b96, one at b80: the rule was timed on an H100 only
#   2 (~4 min, H200): where a 20b step goes at b1 and b64 (profile_step.py)
#   3 (~7 min): 120b b256 at main against untiles256 (tiles256, 7a9821c, undone), one order
#   4 (~9 min, H200 only: 1,024 slots): s44_next_calls.sh 3
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u
only() {  # only TREE...: leave the other prepared trees out of ab.sh's list (this machine's copy only)
    for d in scratch/ab_*/; do t=$(basename "$d" | cut -c4-); [ -f "$d/COMMIT" ] && mv "$d/COMMIT" "$d/COMMIT.off"
        for k in main "$@"; do [ "$t" = "$k" ] && mv "$d/COMMIT.off" "$d/COMMIT"; done; done; }
case "${1:-}" in
    1) only old; OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:96
       OUT=$OUT/r3 bash cookbook/patches/ab.sh run 20b:80 ;;
    2) timeout -k 5 240 python cookbook/profile_step.py --model 20b --batch 1 64 --out "$OUT/profile_20b.json" 2>&1 \
         | tr '\r' '\n' | grep -v '^\s*$' | tail -60 > "$OUT/profile.txt"; grep -A9 '^==' "$OUT/profile.txt" ;;
    3) only untiles256; OUT=$OUT bash cookbook/patches/ab.sh run 120b:256 ;;
    4) OUT=$OUT bash docs/runs/s44_next_calls.sh 3 ;;
    *) echo "usage: next_calls.sh 1|2|3|4"; exit 2 ;;
esac
date -u
