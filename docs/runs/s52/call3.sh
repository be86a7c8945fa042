# s52 call 3: down128's GPU MoE tests, then 20b b256 main vs down128 (median of 3 each), then the down by tokens
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
(cd scratch/ab_down128 && timeout 200 python -m pytest -q -x tests/test_kernels.py -k "moe_real_shapes or moe_route or test_moe" 2>&1 | tail -3) | tee $OUT/pytest_down128.log
OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:256 2>&1 | grep -v Warning
for cfg in 128,4,3 256,4,3; do timeout 100 python cookbook/bench_moe.py --tokens 160 192 224 256 288 --down-splits 1 2 --tiles $cfg 2>&1 | grep -v Warning | sed "s/^/[$cfg] /"; done
