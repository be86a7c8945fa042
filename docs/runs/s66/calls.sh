# The sixty-sixth session's device calls. From the repository root:
# run(command="bash docs/runs/s66/calls.sh 1 [SECONDS, default 560]", carry=["shared"], timeout_s=SECONDS + 40)
#   1: this session's changes on a GPU: test_engine whole (chat_stream's per-call cut, the request lists as plain
#      lists in _release / _admit), then the kernels.py source mutants (the SwiGLU clamp's is new), the cookbook's
#      examples (the interpreter's variant checks left out: the device's numpy breaks them) and test_harmony
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u; git log --oneline -1
case "${1:-}" in
    1) end=$((SECONDS + ${2:-560}))
       for t in "test_engine" "test_kernels -k mutation_of_kernels" "test_cookbook -k example_runs" "test_harmony"; do
           f=${t%% *}; left=$((end - SECONDS)); [ $left -lt 20 ] && { echo "$t: no time left"; continue; }
           timeout $left python -m pytest -q tests/$f.py ${t#$f} -p no:cacheprovider --tb=short -rs > "$OUT/$f.txt" 2>&1
           echo "$t: $(tail -1 "$OUT/$f.txt")"; grep -E "^(FAILED|ERROR)" "$OUT/$f.txt" | head -10
       done ;;
    *) echo "usage: calls.sh 1"; exit 2 ;;
esac
date -u
