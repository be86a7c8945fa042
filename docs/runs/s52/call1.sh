# s52 call 1: routing at b256 on the engine, the MoE at 256 tokens by tile rows, ncu on the engine's b256 tiles
set -u; S=scratch/s52
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 python $S/tilestats256.py 2>&1 | tr "\r" "\n" | grep -v "it/s\]\|Warning" | tail -30
timeout 240 python $S/moe256.py $OUT/ids256.json 2>&1 | tail -20
timeout 150 ncu --kernel-name regex:_moe_kernel --launch-skip 16 --launch-count 2 --section SpeedOfLight \
  --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" python $S/moe256.py $OUT/ids256.json ncu \
  > $OUT/ncu_moe256.txt 2>&1
grep -E "_moe_kernel|Duration|Throughput|Registers|Achieved Occupancy|Theoretical Occ|Issue Slots|Eligible|No Eligible|Block Limit" $OUT/ncu_moe256.txt | head -50
