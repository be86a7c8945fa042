# The sixty-fifth session's device calls. From the repository root:
# run(command="bash docs/runs/s65/calls.sh 1 [SECONDS, default 560]", carry=["shared"], timeout_s=SECONDS + 40)
#   1: the rest of the GPU suite at HEAD that s64's call (cut at 499 s) did not reach: test_kernels first, then
#      the files after it; test_engine and test_model passed there (86 passed 1 skipped, 25 passed) and run last
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u; git log --oneline -1
case "${1:-}" in
    1) end=$((SECONDS + ${2:-560}))
       for t in test_kernels test_reference test_compile test_harmony test_tokenizer test_openai_server test_model test_engine; do
           left=$((end - SECONDS)); [ $left -lt 20 ] && { echo "$t: no time left"; continue; }
           timeout $left python -m pytest -q tests/$t.py -p no:cacheprovider --tb=short -rs > "$OUT/$t.txt" 2>&1
           echo "$t: $(tail -1 "$OUT/$t.txt")"; grep -E "^(FAILED|ERROR)" "$OUT/$t.txt" | head -10
       done ;;
    *) echo "usage: calls.sh 1"; exit 2 ;;
esac
date -u
