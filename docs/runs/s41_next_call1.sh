# The forty-first session's first call for the next session with device time (prepared; not run: no machine was
# lent). Here, first: `bash cookbook/patches/ab.sh prepare attn_next_qk bf16_async`, with nothing else in scratch/
# (what travels is capped at 64 MiB, and trees with copies of shared/ exceed it); then the device tool:
#   run(command="bash docs/runs/s41_next_call1.sh", timeout_s=600)
# At most 8 files come back from $OUT: this writes 8 (5 jsonl, ncu's report, the profile's JSON, steps.log, which
# holds every step's log). Each step has its own limit; gates keep the worst case under 600 s. Reviewed by a helper
# in the forty-first session (file count, the engine's MoE tile, the limits).
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"; LOG="$OUT/steps.log"
for t in main attn_next_qk bf16_async; do ln -sfn "$R/shared" "scratch/ab_$t/shared"; done
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$LOG"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
show() {  # $1: a jsonl file; prints its rows in short
    python -c "
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if 'tflops' in r: print(r['tree'].split('/')[-1], r['start'], r['window'], r['config'], r['us'], 'us', r['tflops'])
    else: print('T', r['T'], 'rows', r['block_m'], r['cfg'], 'up', round(r['gate_up_us']), 'down', round(r['down_us']))
" "$1" 2>&1 | tee -a "$LOG"
}
# 1. prefill attention alone: main against the next-QK patch, 64- and 32-key tiles (cookbook/patches/README.md);
#    ~16 compiles of ~8 s. Worst case t = 240
timeout -k 5 235 python cookbook/bench_prefill_attention.py --trees scratch/ab_main scratch/ab_attn_next_qk \
    --start 0 118784 --configs 16,64,8,3 16,32,8,3 16,32,8,2 8,64,4,3,168 --out "$OUT/prefill_attn.jsonl" \
    >> "$LOG" 2>&1
grep -a failed "$LOG"; show "$OUT/prefill_attn.jsonl"; echo "t=$(el)"
# 2. the prefill MoE alone at the engine's tile for 1,024 and 4,096 tokens (64 rows x 256 columns, 4 warps, 3
#    stages): main against bf16_async (its MMA under the decode). Worst case t = 360
for t in main bf16_async; do
    (cd "scratch/ab_$t" && timeout -k 5 55 python cookbook/bench_moe.py --tokens 1024 4096 --tiles 256,4,3 \
        --out "$OUT/moe_$t.jsonl" >> "$LOG" 2>&1)
    show "$OUT/moe_$t.jsonl"
done; echo "t=$(el)"
# 3. both at 128-row tiles, 8 warps (bf16_async: 234 instructions a warp-step, 216 registers, the MMA asynchronous;
#    main lost 11% there in the thirty-seventh session). Worst case t = 480
for t in main bf16_async; do
    [ "$(el)" -lt 420 ] && (cd "scratch/ab_$t" && timeout -k 5 55 python cookbook/bench_moe.py --tokens 4096 \
        --block-m 128 --tiles 256,8,3 --out "$OUT/moe_m128_$t.jsonl" >> "$LOG" 2>&1)
    [ -f "$OUT/moe_m128_$t.jsonl" ] && show "$OUT/moe_m128_$t.jsonl"
done; echo "t=$(el)"
# 4. where the prefill MoE's warps wait at 64-row tiles (main). Worst case t = 560 if begun by 450
[ "$(el)" -lt 450 ] && timeout -k 5 105 ncu --kernel-name regex:_moe_kernel --launch-skip 16 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
    python cookbook/ncu_moe.py --tokens 4096 > "$OUT/ncu_moe_4096.txt" 2>&1; echo "ncu rc $? t=$(el)" | tee -a "$LOG"
# 5. a decode step at ~1,000 sequences on its own (never measured; the arithmetic says ~28 ms): only if the call
#    has 140 s left (it loads 20b, prefills 1.5M tokens and captures 38 graphs)
[ "$(el)" -lt 430 ] && timeout -k 5 140 python cookbook/profile_step.py --model 20b --batch 1024 --context 1500 \
    --out "$OUT/profile_b1024.json" >> "$LOG" 2>&1; echo "profile rc $? t=$(el)" | tee -a "$LOG"
# 6. the patch's GPU attention tests, if the call has time left (a kernel that wins must also be right)
[ "$(el)" -lt 540 ] && (cd scratch/ab_attn_next_qk && timeout -k 5 45 python -m pytest -q -x tests/test_kernels.py \
    -k attention >> "$LOG" 2>&1); echo "pytest rc $? t=$(el)" | tee -a "$LOG"
tail -n 30 "$LOG"
