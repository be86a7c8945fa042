# s52 call 2: the MoE down's tiles and K splits by token count (bench_moe.py, uniform random routing), the gate_up's
# splits at 256 tokens
set -u; B="python cookbook/bench_moe.py"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for cfg in 128,4,3 256,4,3; do timeout 100 $B --tokens 256 512 1024 --down-splits 1 2 3 4 --tiles $cfg 2>&1 | sed "s/^/[$cfg] /"; done
timeout 60 $B --tokens 256 --up-splits 1 2 --tiles 256,4,3 2>&1 | sed "s/^/[256,4,3] /"
for cfg in 128,4,3 128,8,3 256,8,3; do timeout 100 $B --tokens 2048 8192 --down-splits 1 2 --tiles $cfg 2>&1 | sed "s/^/[$cfg] /"; done
for cfg in 128,4,3 256,4,3; do timeout 100 $B --experts 128 --tokens 1024 4096 --down-splits 1 2 --tiles $cfg 2>&1 | sed "s/^/[120b $cfg] /"; done
