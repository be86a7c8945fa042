# The fifty-sixth session's plan for the next session with device time. Run from the repository root, after:
#   bash cookbook/patches/ab.sh prepare && rm -rf scratch/ab_old && mkdir -p scratch/ab_old &&
#   git archive 40ab508 | tar -x -C scratch/ab_old --exclude=docs && echo 40ab508 > scratch/ab_old/COMMIT
# then run(command="bash docs/runs/s56/next_calls.sh N", carry=["shared", "scratch"]) for N = 1, 2, 3:
#   1 (~6 min, H200 first): b1 at today's code against 40ab508 in one call, 20b both orders, 120b one order. The
#     fifty-sixth session's H200 read 20b b1 1.1% and 120b b1 0.5% under the thirty-first's; machine or code?
#   2 (~4 min, H200): where a 20b step goes at b1 and b64 (profile_step.py), the first H200 profile since the
#     fill was fixed (fifty-third session)
#   3 (~9 min, H200 only: 1,024 slots): s44_next_calls.sh 3
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u
case "${1:-}" in
    1) OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:1
       OUT=$OUT/r3 bash cookbook/patches/ab.sh run 120b:1 ;;
    2) timeout -k 5 300 python cookbook/profile_step.py --model 20b --batch 1 64 --out "$OUT/profile_20b.json" 2>&1 \
         | tr '\r' '\n' | grep -v '^\s*$' | tail -60 > "$OUT/profile.txt"; head -60 "$OUT/profile.txt" ;;
    3) OUT=$OUT bash docs/runs/s44_next_calls.sh 3 ;;
    *) echo "usage: next_calls.sh 1|2|3"; exit 2 ;;
esac
date -u
