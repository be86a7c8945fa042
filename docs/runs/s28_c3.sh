#!/bin/bash
# s28 call 3: fix = HEAD + at one token with E > 32 the top-k launch writes ids/weights that the MoE kernels read
# (E <= 32 unchanged); pre = d5610fb (before 2af6c6c); main = HEAD; sl1 = fix + sliding decode attention at 1 stage
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader
(cd scratch/ab_fix && timeout 150 python -m pytest -q -x tests/test_kernels.py -k "real_shapes or (test_moe and 64-64-64-1)" > $OUT/c3_tests.log 2>&1); echo "tests rc $?"; tail -1 $OUT/c3_tests.log
run() { (cd scratch/ab_$1 && timeout 120 python cookbook/bench_decode.py --model $2 --batch $3 --tokens 1000 --runs 3 --commit $1 --tokenizer $TOK --out $OUT/c3.jsonl > $OUT/c3_$1_$2_$3.log 2>&1); echo "$2 b$3 $1 rc $? $(grep tok/s $OUT/c3_$1_$2_$3.log | cut -c1-70)"; }
run fix 120b 1; run pre 120b 1
run fix 20b 64; run sl1 20b 64
run main 20b 1; run fix 20b 1; run sl1 20b 1
