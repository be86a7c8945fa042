#!/bin/bash
# s31 call 2: every 120b point re-measured on main (code of 845bd00); then 20b b64 and b256 with the MoE down at
# 1 K split from 64 tokens (scratch/ab_d1: ops.down_splits returns 1, None for T >= 64), and main again (both orders)
TOK=$PWD/shared/data/o200k_base.tiktoken
for b in 1 8 64 256; do
  timeout 240 python cookbook/bench_decode.py --model 120b --batch $b --tokens 1000 --runs 3 --commit 40ab508 --tokenizer $TOK --out $OUT/s31_c2_bench.jsonl 2>&1 | grep -E "tok/s|Error|error" | tail -2
done
for t in d1 main; do
  d=.; [ $t != main ] && d=scratch/ab_$t
  (cd $d && timeout 120 python cookbook/bench_decode.py --model 20b --batch 64 256 --tokens 1000 --runs 3 --commit 40ab508+$t --tokenizer $TOK --out $OUT/s31_c2_ab.jsonl 2>&1 | grep -E "tok/s|Error|error" | tail -3)
done
