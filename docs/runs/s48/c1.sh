# s48 call 1 (device time nearly spent on refused starts): the start-up GPU test with two others, then the
# start-up caps at their edges (tiny checkpoint; ran as scratch/s48_edge.py). H100, 00:49 UTC, 161 s of the call
set -u; R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u | tee -a "$OUT/gpu.txt"
timeout -k 5 150 python -m pytest -q tests/test_engine.py \
    -k "start_up or greedy_float32 or dummy_20b" -v --durations=10 2>&1 | tee "$OUT/test_engine_full.txt" | grep -vE "PASSED" | tail -25 | tee "$OUT/test_engine.txt"
timeout -k 5 45 python docs/runs/s48/edge.py 2>&1 | grep -E "^\{|Error" | tee "$OUT/edge.txt"
