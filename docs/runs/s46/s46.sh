# As run from scratch/ in the forty-sixth session (call 1).
# Forty-sixth session, call 1: on an H200 the stale headline table (s44 call 1); on an H100 the scoring memory probe.
set -u
C=$(git rev-parse --short HEAD); mkdir -p "$OUT"
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"); echo "$G $C"
if echo "$G" | grep -q H200 && [ "${1:-}" != mem ]; then bash docs/runs/s44_next_calls.sh 1; exit; fi
for cfg in "8 8192 0.9" "8 8192 1.0" "8 512 1.0"; do
    timeout -k 5 170 python scratch/mem_score.py $cfg 2>&1 | tr '\r' '\n' | grep -E "^(slots|  |KV|Trace|.*Error)" | tee -a "$OUT/mem_score.txt"
done
