# s52 call 5 (main = 4bd6fa7, down128 merged): tiles256's GPU routing tests, _tiles_kernel by BLOCK, 20b b256 A/B
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 100 python scratch/s52/tiles_bench2.py 2>&1 | grep -v Warning
(cd scratch/ab_tiles256 && timeout 150 python -m pytest -q -x tests/test_kernels.py -k "moe_route or moe_real_shapes" 2>&1 | tail -2) | tee $OUT/pytest_tiles256.log
OUT=$OUT/r3 bash cookbook/patches/ab.sh run 20b:256 2>&1 | grep -v Warning
