# s53 call 2: prefill MoE tiles at 128-row tiles; the down rule at 289-400 tokens; 120b profiles with the fixed fill
set -u; mkdir -p $OUT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B="timeout 200 python cookbook/bench_moe.py"
$B --tokens 1536 2048 3072 4096 6144 8192 --tiles 256,8,3 128,4,3 128,8,3 256,4,3 128,4,4 --out $OUT/prefill_tiles.jsonl 2>&1 | tee $OUT/prefill_tiles.txt
$B --tokens 288 320 352 384 400 --tiles 128,4,3 --down-splits 1 2 2>&1 | tee $OUT/down_289_400.txt
$B --tokens 288 320 352 384 400 --tiles 256,4,3 --down-splits 1 2 2>&1 | tee -a $OUT/down_289_400.txt
timeout 280 python cookbook/profile_step.py --model 120b --batch 1 64 256 --out $OUT/profile_120b.json 2>&1 \
  | tr '\r' '\n' | grep -v "it/s\]\|layer/s\]" > $OUT/profile_120b_stdout.txt; grep -A9 "^==" $OUT/profile_120b_stdout.txt
