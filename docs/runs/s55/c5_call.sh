# s55 call 5: undo1b64 (the down back at k_splits' 2 splits from 64 tokens, as before 6854d11) against main at 20b
# b96, the other batch 6854d11 changed, both orders
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"; date -u
mv scratch/ab_main scratch/ab_amain; sed -i 's/+main/+amain/' scratch/ab_amain/COMMIT
OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:96   # amain first
mv scratch/ab_amain scratch/ab_main; sed -i 's/+amain/+main/' scratch/ab_main/COMMIT
echo "r1 took $((SECONDS - T0)) s"
OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:96   # undo1b64 first
date -u
