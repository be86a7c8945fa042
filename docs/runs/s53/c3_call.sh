# s53 call 3: down128p (128-row tiles' down in 128 columns up to 4,096 tokens): its GPU MoE tests, then TTFT A/B
set -u; mkdir -p $OUT; R=$(pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
for t in main down128p; do ln -sfn "$R/shared" "scratch/ab_$t/shared"; done
(cd scratch/ab_down128p && timeout 90 python -m pytest -q tests/test_kernels.py -k "moe_real_shapes and 2048" > $OUT/pytest_down128p.log 2>&1; tail -2 $OUT/pytest_down128p.log)
for t in main down128p; do
  (cd scratch/ab_$t && timeout 110 python $R/scratch/ttft_ab.py $t $OUT/ttft.jsonl 2>&1 | grep '^{' | cut -c1-140)
done
