# s55 call 2: downx2 (twice the down's K splits below 64 tokens, at most 7) and upx2 (the gate_up's split rule at
# half the programs: 2 splits at 8-104 tokens) against main at 20b b8, both orders; upx2's GPU MoE tests first
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"; date -u
(cd scratch/ab_upx2 && ln -sfn ../../shared shared && timeout 120 python -m pytest -q -x tests/test_kernels.py \
  -k "moe_real_shapes or moe_route" 2>&1 | tail -2 | tee "$OUT/upx2_pytest.txt")
mv scratch/ab_main scratch/ab_amain; sed -i 's/+main/+amain/' scratch/ab_amain/COMMIT
OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:8   # amain first
mv scratch/ab_amain scratch/ab_main; sed -i 's/+amain/+main/' scratch/ab_main/COMMIT
echo "r1 took $((SECONDS - T0)) s"
mv scratch/ab_downx2 scratch/ab_0downx2; mv scratch/ab_upx2 scratch/ab_1upx2   # patches first
OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:8
mv scratch/ab_0downx2 scratch/ab_downx2; mv scratch/ab_1upx2 scratch/ab_upx2
date -u
