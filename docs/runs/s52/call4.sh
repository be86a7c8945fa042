# s52 call 4: main first, then down128 (renamed zdown128): 20b b256 and b160; _tiles_kernel by BLOCK and warps
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:256 20b:160 2>&1 | grep -v Warning
timeout 120 python scratch/s52/tiles_bench.py 2>&1 | grep -v Warning
