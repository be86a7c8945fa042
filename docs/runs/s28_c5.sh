#!/bin/bash
# s28 call 5: the GPU tests on 8900041 (b434305's code + a comment)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 230 python -m pytest -q tests/test_kernels.py > $OUT/c5_kernels.log 2>&1; echo "kernels rc $?"; tail -2 $OUT/c5_kernels.log
timeout 130 python -m pytest -q -x tests/test_engine.py -k "batch_1_and_64 or dummy_full_size or graph or greedy" > $OUT/c5_engine.log 2>&1; echo "engine rc $?"; tail -2 $OUT/c5_engine.log
