# The forty-first session's first call for the next session with device time (prepared; not run: no machine was
# lent). Here, first: `bash cookbook/patches/ab.sh prepare attn_next_qk bf16_async`; then the device tool:
#   run(command="bash docs/runs/s41_next_call1.sh", carry=["shared", "scratch"], timeout_s=600)
# Each step has its own limit and writes to $OUT; the step summaries print as they end (t = seconds so far).
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
for t in main attn_next_qk bf16_async; do ln -sfn "$R/shared" "scratch/ab_$t/shared"; done
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
# 1. prefill attention alone: main against the next-QK patch, 64- and 32-key tiles (cookbook/patches/README.md)
timeout 200 python cookbook/bench_prefill_attention.py --trees scratch/ab_main scratch/ab_attn_next_qk \
    --start 0 118784 --configs 16,64,8,3 16,32,8,3 16,32,8,2 8,64,4,3,168 --out "$OUT/prefill_attn.jsonl" \
    > "$OUT/prefill_attn.log" 2>&1
python -c "
import json
for r in map(json.loads, open('$OUT/prefill_attn.jsonl')):
    print(r['tree'].split('/')[-1], r['start'], r['window'], r['config'], r['us'], 'us', r['tflops'], r['maxdiff'])
"; echo "t=$(el)"
# 2. the prefill MoE alone at 1,024 and 4,096 tokens: main against bf16_async (its MMA under the decode)
for t in main bf16_async; do
    (cd "scratch/ab_$t" && timeout 100 python cookbook/bench_moe.py --tokens 1024 4096 --out "$OUT/moe_$t.jsonl" \
        > "$OUT/moe_$t.log" 2>&1; echo "$t moe: $(tail -4 "$OUT/moe_$t.log" | tr '\n' ' ')")
done
# 2b. bf16_async at 128-row tiles (8 warps: 234 instructions a warp-step, 216 registers; main there lost 11% at 4,096
#     tokens in the thirty-seventh session, with its MMA synchronous)
(cd scratch/ab_bf16_async && timeout 80 python cookbook/bench_moe.py --tokens 4096 --tiles 256,4,3 256,8,3 \
    --block-m 128 --out "$OUT/moe_bf16_async_m128.jsonl" > "$OUT/moe_bf16_async_m128.log" 2>&1;
    echo "bf16_async m128: $(tail -4 "$OUT/moe_bf16_async_m128.log" | tr '\n' ' ')")
echo "t=$(el)"
# 3. the kept patch's GPU attention tests, if step 1 shows a gain (a wrong kernel is not worth timing)
(cd scratch/ab_attn_next_qk && timeout 60 python -m pytest -q -x tests/test_kernels.py -k attention \
    > "$OUT/pytest_attn_next_qk.log" 2>&1; echo "attn_next_qk pytest: $(tail -1 "$OUT/pytest_attn_next_qk.log")")
echo "t=$(el)"
# 4. where the prefill MoE's warps wait at 64-row tiles (main)
[ "$(el)" -lt 420 ] && timeout 120 ncu --kernel-name regex:_moe_kernel --launch-skip 16 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
    python cookbook/ncu_moe.py --tokens 4096 > "$OUT/ncu_moe_4096.txt" 2>&1; echo "ncu rc $? t=$(el)"
# 5. a decode step at ~1,000 sequences on its own (never measured; the arithmetic says ~28 ms)
[ "$(el)" -lt 450 ] && timeout 140 python cookbook/profile_step.py --model 20b --batch 1024 --context 1500 \
    --out "$OUT/profile_b1024.json" > "$OUT/profile_b1024.txt" 2>&1; echo "profile rc $? t=$(el)"
tail -n 25 "$OUT/profile_b1024.txt"
