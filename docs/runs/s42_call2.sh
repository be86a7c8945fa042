# Forty-second session, call 2: the prefill MoE at 128-row tiles for 1,024 and 2,048 tokens (where the
# bf16_m128 tree's threshold sits), then TTFT at 32,768 tokens for main, bf16_async and bf16_m128 with their GPU tests.
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
ln -sfn "$R/shared" scratch/ab_bf16_async/shared
(cd scratch/ab_bf16_async && timeout -k 5 80 python cookbook/bench_moe.py --tokens 1024 2048 --block-m 128 \
    --tiles 256,8,3 --out "$OUT/moe_m128_small.jsonl" 2>&1 | grep -a "gate_up") 
(cd scratch/ab_bf16_async && timeout -k 5 60 python cookbook/bench_moe.py --tokens 2048 --tiles 256,4,3 \
    --out "$OUT/moe_64_2048.jsonl" 2>&1 | grep -a "gate_up")
OUT=$OUT timeout -k 5 450 bash cookbook/patches/ab.sh run --tests ttft:32768
