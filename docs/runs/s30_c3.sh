#!/bin/bash
# s30 call 3: GPU tests of the O projection on the split-K linear up to 64 tokens; 120b b64 new vs main
TOK=$PWD/shared/data/o200k_base.tiktoken
timeout 60 python -m pytest -q -x tests/test_kernels.py -k "linear" 2>&1 | tail -2
timeout 150 python -m pytest -q -x tests/test_engine.py -k "same_tokens_at_batch" 2>&1 | tail -2
for t in new main; do
  d=.; [ $t = main ] && d=scratch/ab_main
  (cd $d && timeout 170 python cookbook/bench_decode.py --model 120b --batch 64 --tokens 1000 --runs 3 --commit 9183505+$t --tokenizer $TOK --out $OUT/c3_bench.jsonl 2>&1 | grep -E "tok/s|Error|error" | tail -2)
done
