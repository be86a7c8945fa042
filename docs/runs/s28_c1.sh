#!/bin/bash
# s28 call 1: 120b b1 on HEAD (7fe0ce6 = 2af6c6c's kernels); decode attention sweep at b64, main vs var
# (var = the cached keys' page ids loaded one tile ahead, so the pipeliner can keep K/V copies in flight)
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader
for t in var main; do
  (cd scratch/ab_$t && timeout 150 python cookbook/bench_attention.py --batch 64 --splits 1 2 --configs 128,4,1 128,4,2 128,4,3 64,4,2 64,4,3 64,4,4 --out $OUT/c1_attn_$t.jsonl > $OUT/c1_attn_$t.log 2>&1); echo "attn $t rc $?"; cut -c1-95 $OUT/c1_attn_$t.log | grep "us,"
done
(cd scratch/ab_main && timeout 200 python cookbook/bench_decode.py --model 120b --batch 1 --tokens 1000 --runs 3 --commit 7fe0ce6 --tokenizer $TOK --out $OUT/c1_120b.jsonl > $OUT/c1_120b.log 2>&1); echo "120b b1 rc $? $(grep tok/s $OUT/c1_120b.log | cut -c1-90)"
