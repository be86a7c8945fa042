#!/bin/bash
# prepared, not run (the device budget was spent): apply docs/runs/s26_count_after_store.patch to the repo root first
# s26 call 6: the split gate_up's tail with a relaxed count after the store and spin-on-slot (no fence): GPU split tests, 20b b1 A/B
TOK=$PWD/shared/data/o200k_base.tiktoken
timeout 60 python -m pytest -q -x tests/test_kernels.py -k "gate_up_splits or unzeroed" > $OUT/tests.log 2>&1; echo "tests rc $?"; tail -1 $OUT/tests.log
for t in base new; do
  d=scratch/ab_base; [ $t = new ] && d=.
  (cd $d && timeout 80 python cookbook/bench_decode.py --model 20b --batch 1 --tokens 1000 --runs 3 --commit $t --tokenizer $TOK --out $OUT/c6.jsonl > $OUT/b1_$t.log 2>&1); echo "b1 $t rc $?"; tail -1 $OUT/c6.jsonl | cut -c1-100
done
