# The fifty-ninth session's plan for the next session with device time, first of all. From the repository root:
# run(command="bash docs/runs/s59/next_calls.sh N", carry=["shared"], kind="nvidia-h200", timeout_s=600):
#   1 (~7-9 min): the GPU suite but tests/test_cookbook.py at 8de1b85+ (the attention reference's new form, the
#     down's split rule; call 3 of this session reached 70% of the whole suite in 420 s)
#   2 (~3-5 min): tests/test_cookbook.py but the interpreter's variant checks (the device's numpy 2.5.2 breaks them):
#     every example on the tiny checkpoint, each asserted in `_moe_gemm` before 8de1b85
# Then docs/runs/s57/next_calls.sh 1|2|3|4 (the prep is in its header).
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u
case "${1:-}" in
    1) timeout 560 python -m pytest -q tests/ --ignore=tests/test_cookbook.py -p no:cacheprovider --tb=short \
         > "$OUT/pytest_suite.txt" 2>&1; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest_suite.txt" | tail -20 ;;
    2) timeout 560 python -m pytest -q tests/test_cookbook.py -k "not variant_checks" -p no:cacheprovider \
         --tb=short > "$OUT/pytest_cookbook.txt" 2>&1; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest_cookbook.txt" ;;
    *) echo "usage: next_calls.sh 1|2"; exit 2 ;;
esac
date -u
