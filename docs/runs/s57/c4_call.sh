# s57 call 4 (the same warm H100): 20b b72, both orders
set -u; OUT=$(cd "$OUT" && pwd); nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; for d in scratch/ab_old scratch/ab_untiles256; do mv $d/COMMIT $d/COMMIT.off; done; OUT=$OUT timeout 420 bash cookbook/patches/ab.sh run --both 20b:72; date -u
