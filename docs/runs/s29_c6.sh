#!/bin/bash
# s29 call 6: Nsight Compute on the one-token gate_up and down (eager, one launch each after warm-up), to see where
# the in-kernel top-k's cost at 128 experts goes: main (given ids at E = 128, in-kernel top-k at 32) against in23
# (in-kernel top-k at every E)
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats"
for te in main:32 main:128 in23:128; do t=${te%:*}; e=${te#*:}
  d=.; [ $t = in23 ] && d=scratch/ab_in23
  (cd $d && timeout 120 ncu --kernel-name regex:_moe_kernel --launch-skip 16 --launch-count 2 $S python cookbook/ncu_moe.py --tokens 1 --experts $e > $OUT/c6_ncu_${t}_$e.txt 2>&1); echo "$t E=$e rc $?"
  grep -E "^  _moe_kernel|Duration|Executed Ipc A|Registers Per|Stall|Warp Cycles Per Issued|Executed Instructions  " $OUT/c6_ncu_${t}_$e.txt | grep -v "^ *-" | head -14
done
