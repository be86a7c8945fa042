#!/bin/bash
# call 3: bounds (wrong results) on the engine's own kernel: nt = no gate_up split tail, ns = no scales; base = main
# trees: git archive a144572 into scratch/ab_{base,nt,ns}; nt: "if GATE_UP and SPLITS > 1:" -> "if False:";
# ns: the loop's sc and sc_next lines dropped and wf reshaped to [BLOCK_N, 64] unscaled
TOK=$PWD/shared/data/o200k_base.tiktoken
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
for t in base nt ns; do
  (cd scratch/ab_$t && timeout 60 python cookbook/bench_moe.py --tokens 1 --up-splits 2 > $OUT/moe_$t.log 2>&1); echo "moe $t rc $?"; grep -i "gate_up us" $OUT/moe_$t.log | head -2
  (cd scratch/ab_$t && timeout 60 python cookbook/bench_moe.py --tokens 1 --chain > $OUT/chain_$t.log 2>&1); echo "chain $t rc $?"; grep -iv "warn" $OUT/chain_$t.log | tail -3
done
for t in base nt ns; do
  (cd scratch/ab_$t && timeout 150 python cookbook/bench_decode.py --model 20b --batch 1 --tokens 1000 --runs 3 --commit $t --tokenizer $TOK --out $OUT/c3.jsonl > $OUT/b1_$t.log 2>&1); echo "b1 $t rc $?"; tail -1 $OUT/c3.jsonl | cut -c1-110
done
nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active --format=csv >> $OUT/gpu.txt 2>&1
