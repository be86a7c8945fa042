# s55 call 5 (not run: no device time left; rewritten for ab.sh's --both after the session's calls): undo1b64 (the
# down back at k_splits' 2 splits from 64 tokens, as before 6854d11) against main at 20b b96, the other batch
# 6854d11 changed, both orders. Before it, here: cp docs/runs/s55/undo1b64.patch cookbook/patches/ &&
# bash cookbook/patches/ab.sh prepare undo1b64
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"; date -u
OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:96
date -u
