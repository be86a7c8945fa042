#!/bin/bash
# s30 call 2: 20b b64 end to end, main vs the O projection (vO) / O and QKV (vOQ) on the split-K linear up to 64 tokens
TOK=$PWD/shared/data/o200k_base.tiktoken
for t in main vO vOQ vO main; do
  d=.; [ $t != main ] && d=scratch/ab_$t
  (cd $d && timeout 115 python cookbook/bench_decode.py --model 20b --batch 64 --tokens 1000 --runs 3 --commit 9183505+$t --tokenizer $TOK --out $OUT/c2_bench.jsonl 2>&1 | grep -E "tok/s|Error|error" | tail -2)
done
