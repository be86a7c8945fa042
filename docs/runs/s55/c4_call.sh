# s55 call 4: slide2 (sliding-window decode attention at 2 KV splits of 64 keys while full layers split: b1-b32)
# against main at 20b b1 and b8, both orders; slide2's GPU attention tests first
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"; date -u
(cd scratch/ab_slide2 && ln -sfn ../../shared shared && timeout 100 python -m pytest -q -x tests/test_kernels.py \
  -k "attention" 2>&1 | tail -2 | tee "$OUT/slide2_pytest.txt")
mv scratch/ab_main scratch/ab_amain; sed -i 's/+main/+amain/' scratch/ab_amain/COMMIT
OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:8 20b:1   # amain first
mv scratch/ab_amain scratch/ab_main; sed -i 's/+amain/+main/' scratch/ab_main/COMMIT
echo "r1 took $((SECONDS - T0)) s"
OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:8 20b:1   # slide2 first
date -u
