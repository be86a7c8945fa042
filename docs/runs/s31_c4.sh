#!/bin/bash
# s31 call 4: the 16-row, 256-column MoE tiles (batch 64) at 4 cp.async stages instead of 3 (scratch/ab_s4:
# `(256, 4, 4 if block_m == 16 else 3)` in ops._moe_gemm; same 334-instruction loop, 158 registers, 32 KB of shared
# memory a program instead of 22 KB, still 3 programs an SM). 20b b64 main, s4, s4, main; 120b b64 s4, main
TOK=$PWD/shared/data/o200k_base.tiktoken
run() { d=.; [ $2 != main ] && d=scratch/ab_$2
  (cd $d && timeout 110 python cookbook/bench_decode.py --model $1 --batch 64 --tokens 1000 --runs 3 --commit 40ab508+$2 --tokenizer $TOK --out $OUT/s31_c4_ab.jsonl 2>&1 | grep -E "tok/s|Error|error" | tail -2); }
run 20b main; run 20b s4; run 20b s4; run 20b main; run 120b s4; run 120b main
