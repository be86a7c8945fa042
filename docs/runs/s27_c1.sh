#!/bin/bash
# s27 call 1: count-after-store split tail (repo root = patch), +up3 (3 gate_up splits on it), base = HEAD
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader
timeout 100 python -m pytest -q -x tests/test_kernels.py -k "gate_up_splits or unzeroed or moe_real" > $OUT/tests.log 2>&1; echo "tests rc $?"; tail -1 $OUT/tests.log
run() { # tree batch tag
  d=$1; (cd $d && timeout 150 python cookbook/bench_decode.py --model 20b --batch $2 --tokens 1000 --runs 3 --commit $3 --tokenizer $TOK --out $OUT/c1.jsonl > $OUT/b$2_$3.log 2>&1); echo "b$2 $3 rc $? $(grep tok/s $OUT/b$2_$3.log | cut -c1-60)"
}
run scratch/ab_base 1 base
run . 1 new
run scratch/ab_up3 1 up3
run scratch/ab_base 1 base2
run . 1 new2
run scratch/ab_base 4 base
run . 4 new
