# s53 call 3: down128p (128-row tiles' down in 128 columns up to 4,096 tokens): its GPU MoE tests, then TTFT A/B
set -u; mkdir -p $OUT; R=$(pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
for t in main down128p; do ln -sfn "$R/shared" "scratch/ab_$t/shared"; done
for t in down128p main; do
  (cd scratch/ab_$t && timeout 110 python $R/scratch/ttft_ab.py $t $OUT/ttft.jsonl 2>&1 | grep '^{' | cut -c1-140)
done
