#!/bin/bash
# s29 call 5: one-token routing at 128 experts. main = HEAD (top-k launch over 32 experts, in-kernel top-k at 32);
# in23 = top-k inside the MoE kernels at every E (the router's 23 K splits: a [32, EP] fp32 partials load in each
# program); in12 / in6 = the same with the router in 12 / 6 K splits at one token ([16, EP] / [8, EP] loads).
# bench_moe --chain: route + gate_up + down per layer, 8 layers in one graph; then 120b and 20b b1 end to end.
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
for e in 128 32; do for t in main in23 in12 in6; do
  (cd scratch/ab_$t && timeout 100 python cookbook/bench_moe.py --tokens 1 --experts $e --chain > $OUT/c5_chain_${e}_$t.log 2>&1); echo "E=$e $t rc $? $(grep 'per layer' $OUT/c5_chain_${e}_$t.log)"
done; done
for t in main in6 main in6; do
  (cd scratch/ab_$t && timeout 100 python cookbook/bench_decode.py --model 120b --batch 1 --tokens 1000 --runs 3 --commit 2f346a5-$t --tokenizer $TOK --out $OUT/c5_e2e.jsonl > $OUT/c5_120b_$t.log 2>&1); echo "120b b1 $t rc $? $(grep tok/s $OUT/c5_120b_$t.log | tail -1 | cut -c1-100)"
done
