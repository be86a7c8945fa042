# The sixty-fourth session's device calls. From the repository root:
# run(command="bash docs/runs/s64/calls.sh 1", carry=["shared"], timeout_s=600)
#   1: the GPU suite at HEAD, the engine's tests first (s63's device handling in LLM.__init__ and _loop, f08429d, never
#      run on a GPU), then the rest but test_cookbook.py; each file's result is kept if the time runs out
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u; git log --oneline -1
case "${1:-}" in
    1) end=$((SECONDS + 560))
       for t in test_engine test_model test_kernels test_reference test_compile test_harmony test_tokenizer test_openai_server; do
           left=$((end - SECONDS)); [ $left -lt 20 ] && { echo "$t: no time left"; continue; }
           timeout $left python -m pytest -q tests/$t.py -p no:cacheprovider --tb=short -rs > "$OUT/$t.txt" 2>&1
           echo "$t: $(tail -1 "$OUT/$t.txt")"; grep -E "^(FAILED|ERROR)" "$OUT/$t.txt" | head -10
       done ;;
    *) echo "usage: calls.sh 1"; exit 2 ;;
esac
date -u
