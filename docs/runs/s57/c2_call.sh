# s57 call 2 (the same warm H100): main against down3, main first, 20b b64 and b96
bash docs/runs/s57/calls.sh 3x 2>/dev/null; set -u; OUT=$(cd "$OUT" && pwd); nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; for d in scratch/ab_old scratch/ab_untiles256; do mv $d/COMMIT $d/COMMIT.off; done; OUT=$OUT bash cookbook/patches/ab.sh run 20b:64 20b:96; date -u
