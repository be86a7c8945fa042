# s54 call 1: on an H200 the 20b headline (s44 call 1); on an H100 a short MoE tile look at 64 tokens
set -u
OUT=${OUT:-scratch/out}; mkdir -p "$OUT"
G=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"); echo "$G"
date -u
if echo "$G" | grep -q H200; then
  OUT=$OUT bash docs/runs/s44_next_calls.sh 1
else
  timeout -k 5 200 python cookbook/bench_moe.py --tokens 64 --tiles 128,4,3 256,4,3 --out "$OUT/moe64.jsonl" 2>&1 | tail -12
  timeout -k 5 100 python cookbook/bench_moe.py --tokens 64 --tiles 128,4,3 --down-splits 1 2 3 2>&1 | tail -3
  timeout -k 5 100 python cookbook/bench_moe.py --tokens 64 --tiles 256,4,3 --down-splits 1 2 3 2>&1 | tail -3
fi
date -u
