#!/bin/bash
# s29 call 1: the one-token MoE as a CUDA-core GEMV (cookbook/moe_variants/gemv_one.py): GPU check against the
# engine's kernels, then route + gate_up + down per layer (8 layer copies in one graph) against the engine's K.moe
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
timeout 120 python cookbook/moe_variants/gemv_one.py --check > $OUT/c1_check.log 2>&1; echo "check rc $?"; tail -4 $OUT/c1_check.log
for e in 32 128; do
  timeout 200 python cookbook/moe_variants/gemv_one.py --bench --experts $e > $OUT/c1_bench_$e.log 2>&1; echo "bench E=$e rc $?"
  cut -c1-150 $OUT/c1_bench_$e.log | tail -12
done
