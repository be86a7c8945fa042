# s54 call 2: down1b64 (16-row tiles from 64 tokens: the down at 1 K split) against main at 20b b64, both orders
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"; date -u
mv scratch/ab_main scratch/ab_amain; sed -i 's/+main/+amain/' scratch/ab_amain/COMMIT
OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:64   # amain first
mv scratch/ab_amain scratch/ab_main; sed -i 's/+amain/+main/' scratch/ab_main/COMMIT
echo "r1 took $((SECONDS - T0)) s"
OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:64   # down1b64 first
date -u
