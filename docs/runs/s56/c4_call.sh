# s56 call 4: 120b b8 and b256 for the headline table, then the fifty-fifth session's chain check
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; C=$(git rev-parse --short HEAD 2>/dev/null || echo faabe7b)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; date -u
timeout -k 5 330 python cookbook/bench_decode.py --model 120b --batch 8 256 --tokens 1000 --runs 3 --commit "$C" \
  --out "$OUT/bench_120b_b8_b256.jsonl" 2>&1 | grep -E 'tok/s|failed|Error'
OUT=$OUT/chain bash docs/runs/s55/next_call.sh
date -u
