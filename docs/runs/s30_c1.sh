#!/bin/bash
# s30 call 1: b64 MoE tile counts (dummy 20b), T=64 dense linear sweep, ncu on the b64 gate_up / down
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
TOK=$PWD/shared/data/o200k_base.tiktoken
timeout 150 python scratch/tilestats.py $TOK 2>&1 | grep -v Warning | tail -3
timeout 240 python scratch/lin64.py 2>&1 | tail -20
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats"
timeout 100 ncu --kernel-name regex:_moe_kernel --launch-skip 16 --launch-count 2 $S python cookbook/ncu_moe.py --tokens 64 > $OUT/ncu64.txt 2>&1; echo "ncu rc $?"
grep -E "^  _moe_kernel|Duration|Executed Ipc A|Issue Slots Busy|Registers Per|Warp Cycles Per Issued|Achieved Occupancy|Eligible Warps|No Eligible|Memory Throughput|Compute \(SM\)" $OUT/ncu64.txt | grep -v "^ *-" | head -30
timeout 100 ncu --kernel-name regex:_moe_kernel --launch-skip 16 --launch-count 2 --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active" python cookbook/ncu_moe.py --tokens 64 > $OUT/ncu64_stalls.txt 2>&1; echo "ncu2 rc $?"
awk '$NF+0 > 0.05' $OUT/ncu64_stalls.txt | grep -E "stalled|pipe" | head -60
