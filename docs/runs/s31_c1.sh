#!/bin/bash
# s31 call 1: every 20b point of the issue re-measured on main (code of 845bd00), one machine, median of 3 processes
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
for b in 1 8 64 256; do
  timeout 200 python cookbook/bench_decode.py --model 20b --batch $b --tokens 1000 --runs 3 --commit 40ab508 --tokenizer $TOK --out $OUT/s31_c1_bench.jsonl 2>&1 | grep -E "tok/s|Error|error" | tail -2
done
