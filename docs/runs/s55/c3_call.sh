# s55 call 3: n256b8 (256-column MoE tiles from 32 token-expert pairs, so 20b b8 too) against main at 20b b8, both
# orders; then where a 20b b8 step goes (profile_step.py on main)
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"; date -u
mv scratch/ab_main scratch/ab_amain; sed -i 's/+main/+amain/' scratch/ab_amain/COMMIT
OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:8   # amain first
mv scratch/ab_amain scratch/ab_main; sed -i 's/+amain/+main/' scratch/ab_main/COMMIT
echo "r1 took $((SECONDS - T0)) s"
OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:8   # n256b8 first
echo "r2 done at $((SECONDS - T0)) s"
timeout -k 5 200 python cookbook/profile_step.py --model 20b --batch 8 --out "$OUT/profile_20b_b8.json" 2>&1 \
  | tr '\r' '\n' | grep -v '^\s*$' | tail -45 > "$OUT/profile_b8.txt"; head -45 "$OUT/profile_b8.txt"
date -u
