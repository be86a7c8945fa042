#!/bin/bash
# s27 call 4: the committed code (repo root): GPU MoE / routing / compile tests, then 20b b1 against base (f8249e9)
TOK=$PWD/shared/data/o200k_base.tiktoken
timeout 110 python -m pytest -q -x tests/test_kernels.py -k "moe or route" > $OUT/tests.log 2>&1; echo "tests rc $?"; tail -1 $OUT/tests.log
(timeout 80 python cookbook/bench_decode.py --model 20b --batch 1 --tokens 1000 --runs 3 --commit 2af6c6c --out $OUT/c4.jsonl > $OUT/b1_new.log 2>&1); echo "b1 new rc $? $(grep tok/s $OUT/b1_new.log | cut -c1-60)"
