#!/bin/bash
# trees: base = git archive 09dad5a in scratch/ab_base; new = the repo root with docs/runs/s26_spin_tail.patch applied
# s26 call 5: the split gate_up's tail with an early relaxed count and spin-on-slot (no fence): GPU tests, chain, 20b b1/b4 A/B
TOK=$PWD/shared/data/o200k_base.tiktoken
timeout 200 python -m pytest -q -x tests/test_kernels.py -k "moe or attention_split" > $OUT/tests.log 2>&1; echo "tests rc $?"; tail -1 $OUT/tests.log
for t in base new; do
  d=scratch/ab_base; [ $t = new ] && d=.
  (cd $d && timeout 60 python cookbook/bench_moe.py --tokens 1 4 --chain 2>&1 | grep -v -i warn); echo "chain $t rc $?"
done
for b in 1 4; do for t in base new; do
  d=scratch/ab_base; [ $t = new ] && d=.
  (cd $d && timeout 120 python cookbook/bench_decode.py --model 20b --batch $b --tokens 1000 --runs 3 --commit $t --tokenizer $TOK --out $OUT/c5.jsonl > $OUT/b${b}_$t.log 2>&1); echo "b$b $t rc $?"; tail -1 $OUT/c5.jsonl | cut -c1-100
done; done
timeout 60 python cookbook/bench_moe.py --tokens 1 4 --up-splits 1 2 2>&1 | grep -v -i warn
