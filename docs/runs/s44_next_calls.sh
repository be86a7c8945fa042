# The forty-fourth session's plan for the next session with device time: the headline table at today's code.
# The H200 rows in README.md and docs/performance.md predate d99e1f4 (the fp16 MoE input), 2b47fe3 (the 2 GiB
# reserve) and c84a537 (the packing). Run from the repository root: run(command="bash docs/runs/s44_next_calls.sh N",
# timeout_s=600) for N = 1, 2, 3 (each under ~8 minutes on an H200 by the eighteenth session's point costs).
#   1: 20b b1, b8, b64, b256 (median of 3 processes each; issue 5's method)
#   2: 120b b1 and b64, then 20b's TTFT at 122,880 tokens
#   3: 1,000 requests at 1,024 slots, twice: the first run compiles inside its timed window (forty-fourth session);
#      untried on an 80 GB H100 since the reserve grew with the slots
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
C="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
gpu() { nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; }
case "${1:-}" in
    1) gpu; timeout -k 5 560 python cookbook/bench_decode.py --model 20b --batch 1 8 64 256 --tokens 1000 --runs 3 \
           --commit "$C" --out "$OUT/bench_20b.jsonl" 2>&1 | grep -E 'tok/s|failed|Error' ;;
    2) gpu; timeout -k 5 420 python cookbook/bench_decode.py --model 120b --batch 1 64 --tokens 1000 --runs 3 \
           --commit "$C" --out "$OUT/bench_120b.jsonl" 2>&1 | grep -E 'tok/s|failed|Error'
       timeout -k 5 150 python cookbook/bench_long.py ttft --model 20b --lengths 122880 --commit "$C" \
           --out "$OUT/ttft_20b.jsonl" 2>&1 | grep -E '^\{|failed|Error' ;;
    3) gpu; timeout -k 5 560 python cookbook/bench_long.py many --model 20b --max-slots 1024 1024 --commit "$C" \
           --out "$OUT/many_1024.jsonl" 2>&1 | grep -E '^\{|failed|Error' ;;
    *) echo "usage: s44_next_calls.sh 1|2|3"; exit 2 ;;
esac
