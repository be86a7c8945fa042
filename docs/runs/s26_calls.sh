#!/bin/bash
# twenty-sixth session's device calls. Trees: base = `git archive 09dad5a` in scratch/ab_base; new = the repo root with
# docs/runs/s26_deferred_swiglu.patch applied (call 1 ran the first form: gate and up as two 4-byte-strided [64, BM] tiles; calls 2-3 the second: one [64, BM, 2] tile).
TOK=$PWD/shared/data/o200k_base.tiktoken
# call 1: the GPU MoE tests, then each tree: the gate_up at 1 and 2 splits, the MoE chain, 20b b1 and b8
timeout 240 python -m pytest -q -x tests/test_kernels.py -k "moe"
for t in base new; do
  d=scratch/ab_base; [ $t = new ] && d=.
  (cd $d && python cookbook/bench_moe.py --tokens 1 --up-splits 1 2 && python cookbook/bench_moe.py --tokens 1 8 --chain)
done
for b in 1 8; do for t in base new; do
  d=scratch/ab_base; [ $t = new ] && d=.
  (cd $d && python cookbook/bench_decode.py --model 20b --batch $b --tokens 1000 --runs 3 --commit $t --tokenizer $TOK --out $OUT/c1.jsonl)
done; done
# call 2 (second form, new tree only): python docs/runs/s26_mb.py
# call 3: ncu --kernel-name _moe_kernel --launch-skip 2 --launch-count 2 --section SpeedOfLight --section WarpStateStats \
#         --section LaunchStats --section Occupancy python docs/runs/s26_ncu_down.py
# call 4 (the patch's final form): python docs/runs/s26_mb.py, then 20b b1 for base and new as in call 1
