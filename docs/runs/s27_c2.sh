#!/bin/bash
# s27 call 2: more cp.async stages for the small-batch MoE: g4/g5 = gate_up (128, 4, 4/5) below 64 pairs;
# d4 = the one-token down (256, 4, 4); base = HEAD. Trees: git archive HEAD into scratch/ab_*, one line each.
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader
run() { # tree batch tag
  (cd scratch/ab_$1 && timeout 150 python cookbook/bench_decode.py --model 20b --batch $2 --tokens 1000 --runs 3 --commit $3 --tokenizer $TOK --out $OUT/c2.jsonl > $OUT/b$2_$3.log 2>&1); echo "b$2 $3 rc $? $(grep tok/s $OUT/b$2_$3.log | cut -c1-60)"
}
run base 1 base
run g4 1 g4
run g5 1 g5
run d4 1 d4
run base 1 base2
run base 8 base
run g4 8 g4
