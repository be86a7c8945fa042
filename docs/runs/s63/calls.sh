# The sixty-third session's device calls. From the repository root:
# run(command="bash docs/runs/s63/calls.sh N", carry=["shared"], timeout_s=600):
#   1 (~7-9 min): the GPU suite but tests/test_cookbook.py, at this session's HEAD
#   2 (~3-5 min): tests/test_cookbook.py but the interpreter's variant checks (the device's numpy breaks them)
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u; git log --oneline -1
case "${1:-}" in
    1) timeout 570 python -m pytest -q tests/ --ignore=tests/test_cookbook.py -p no:cacheprovider --tb=short -rs \
         > "$OUT/pytest_suite.txt" 2>&1; grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" "$OUT/pytest_suite.txt" | tail -30 ;;
    2) timeout 570 python -m pytest -q tests/test_cookbook.py -k "not variant_checks" -p no:cacheprovider \
         --tb=short -rs > "$OUT/pytest_cookbook.txt" 2>&1; grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" "$OUT/pytest_cookbook.txt" ;;
    *) echo "usage: calls.sh 1|2"; exit 2 ;;
esac
date -u
# call 3 (nvidia-h100-x2, as run): timeout 280 python -m pytest -q tests/test_engine.py -rs -p no:cacheprovider
#   -k "second_gpu or vllm_spellings or engine_seed or greedy_float32 or refused_together" > $OUT/pytest_2gpu.txt
