# The sixty-third session's plan for the next session with device time, first of all. From the repository root:
# run(command="bash docs/runs/s63/next_calls.sh N", carry=["shared"], timeout_s=600):
#   1 (~9 min, any one GPU): the GPU suite but tests/test_cookbook.py at HEAD: f08429d's device handling
#     (LLM sets the calling thread's and the loop's current device) ran on no GPU after 10b3a2e's failure
#   2 (~2 min, kind="nvidia-h100-x2" where lent): test_a_second_gpu_serves_as_the_first (device="cuda:1"), never run
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u
case "${1:-}" in
    1) timeout 570 python -m pytest -q tests/ --ignore=tests/test_cookbook.py -p no:cacheprovider --tb=short -rs \
         > "$OUT/pytest_suite.txt" 2>&1; grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" "$OUT/pytest_suite.txt" | tail -30 ;;
    2) timeout 300 python -m pytest -q tests/test_engine.py -k "second_gpu or greedy_float32" -p no:cacheprovider \
         --tb=short -rs > "$OUT/pytest_2gpu.txt" 2>&1; tail -8 "$OUT/pytest_2gpu.txt" ;;
    *) echo "usage: next_calls.sh 1|2"; exit 2 ;;
esac
date -u
