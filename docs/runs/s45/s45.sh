# The forty-fifth session's call after 0d54ceb (run from the repository root: bash docs/runs/s45/s45.sh; as run, from scratch/)
set -u
R=$(pwd); C=$(git rev-parse --short HEAD)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for S in 1024 256; do echo "== mem $S"; timeout 120 python docs/runs/s45/mem1024.py $S 2>&1 | tr '\r' '\n' | grep -E "^(before|after|captured|ready|sampling|failed|KV|torch|Trace)" | tee -a $OUT/mem_$S.txt; done
timeout -k 5 300 python cookbook/bench_long.py many --model 20b --max-slots 1024 1024 --commit "$C+logits" \
    --out "$OUT/many_1024.jsonl" 2>&1 | grep -E '^\{|failed|Error'
timeout -k 5 200 python cookbook/bench_decode.py --model 20b --batch 1 64 --tokens 1000 --runs 3 \
    --commit "$C+logits" --out "$OUT/bench_20b.jsonl" 2>&1 | grep -E 'tok/s|failed|Error'
