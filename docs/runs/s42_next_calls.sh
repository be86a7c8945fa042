# The forty-second session's plan for the next session with device time (prepared; not run). Here, first:
#   bash cookbook/patches/ab.sh prepare x16_regs      # scratch/ab_main (HEAD) and scratch/ab_x16_regs
#   mkdir -p scratch/ab_old && git archive 5831b52 | tar -x -C scratch/ab_old --exclude=docs \
#       && echo 5831b52+old > scratch/ab_old/COMMIT    # the engine before the fp16 MoE input (d99e1f4)
# then one device call each: run(command="bash docs/runs/s42_next_calls.sh 1", timeout_s=600), then 2, then 3.
#   1: the GPU kernel tests of main (the fp16 MoE input never ran them on a GPU) and x16_regs's MoE tests
#   2: 20b b1 and b64, median of 3, old / main / x16_regs (~6 minutes)
#   3: TTFT at 32,768 tokens and 120b b1 for the three trees
# Keep d99e1f4 if b1 and b64 lose < 1% against old (TTFT gained 6.1% in one run); keep x16_regs if it gains at b1
# or b64 over main and TTFT is unchanged.
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
for d in scratch/ab_*/; do ln -sfn "$R/shared" "$d/shared"; done
case "${1:-}" in
    1) (cd scratch/ab_main && timeout -k 5 330 python -m pytest -q tests/test_kernels.py > "$OUT/pytest_main.log" 2>&1)
       echo "main: $(tail -1 "$OUT/pytest_main.log")"
       (cd scratch/ab_x16_regs && timeout -k 5 200 python -m pytest -q tests/test_kernels.py -k "moe or route" \
           > "$OUT/pytest_x16.log" 2>&1); echo "x16_regs: $(tail -1 "$OUT/pytest_x16.log")" ;;
    2) OUT=$OUT timeout -k 5 580 bash cookbook/patches/ab.sh run 20b:1 20b:64 ;;
    3) OUT=$OUT timeout -k 5 580 bash cookbook/patches/ab.sh run ttft:32768 120b:1 ;;
    *) echo "usage: s42_next_calls.sh 1|2|3"; exit 2 ;;
esac
