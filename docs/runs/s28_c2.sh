#!/bin/bash
# s28 call 2: 120b b1 A/B: main (HEAD 7fe0ce6), pre (d5610fb: before top-k in the one-token MoE), noown (HEAD,
# own top-k only where E <= 32: 120b takes the top-k + tiles launches)
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader
run() { (cd scratch/ab_$1 && timeout 110 python cookbook/bench_decode.py --model 120b --batch 1 --tokens 1000 --runs 3 --commit $2 --tokenizer $TOK --out $OUT/c2.jsonl > $OUT/c2_$2.log 2>&1); echo "120b b1 $2 rc $? $(grep tok/s $OUT/c2_$2.log | cut -c1-70)"; }
run main main; run pre pre; run noown noown; run main main2; run pre pre2
