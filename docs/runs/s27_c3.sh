#!/bin/bash
# s27 call 3: rt = at one token the MoE kernels take top-k of the router's partials themselves (no top-k launch);
# base = HEAD. Trees: git archive HEAD into scratch/ab_{base,rt}, rt patched (docs/runs/s27_route_in_moe.patch)
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader
(cd scratch/ab_rt && timeout 130 python -m pytest -q -x tests/test_kernels.py -k "96-1-4 or (real_shapes and 1-32) or (real_shapes and 1-128)" > $OUT/tests_rt.log 2>&1); echo "tests rc $?"; tail -1 $OUT/tests_rt.log
run() { # tree batch tag
  (cd scratch/ab_$1 && timeout 150 python cookbook/bench_decode.py --model 20b --batch $2 --tokens 1000 --runs 3 --commit $3 --tokenizer $TOK --out $OUT/c3.jsonl > $OUT/b$2_$3.log 2>&1); echo "b$2 $3 rc $? $(grep tok/s $OUT/b$2_$3.log | cut -c1-60)"
}
run base 1 base
run rt 1 rt
run base 1 base2
run rt 1 rt2
