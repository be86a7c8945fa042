# The forty-seventh session's plan for the next session with device time (either card), from the repository root:
#   here first:  bash cookbook/patches/ab.sh prepare align16
#                mkdir -p scratch/s47_old && git archive 6376002 | tar -x -C scratch/s47_old   (the start-up before)
#   the device:  run(command="bash docs/runs/s47_next_calls.sh N", timeout_s=600), N = 1, 2, 3, on one warm machine
#   1: the start-up's GPU test (tiny checkpoint), then a fresh Triton cache per tree: start-up time and the first and
#      second request at 5, 20, 300, 2,000 and 4,096 tokens, 6376002 (2 start-up prompts) against this tree (25)
#   2: decode tok/s, main against align16 (three kernels' %16 specializations back): 20b b1, b64 and 120b b64
#   3: the whole tests/test_engine.py on the warm machine (not run on a GPU since db8d571)
# The forty-eighth session ran only call 1's GPU test (passed, H100) before its device time ran out on refused starts;
# call 1 now also runs docs/runs/s48/edge2.py (start-up's caps at their edges, tiny checkpoint).
# The forty-ninth session ran all three (docs/runs/s49/calls.sh, as run); the patch is now docs/runs/s47_align16.patch.
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
gpu() { nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; }
case "${1:-}" in
    1) gpu; timeout -k 5 150 python -m pytest -q -x tests/test_engine.py -k "start_up or greedy_float32" 2>&1 \
           | tail -3 | tee "$OUT/test_start_up.txt"
       ln -sfn "$R/shared" scratch/s47_old/shared
       for t in new old; do d=$R; [ $t = old ] && d=$R/scratch/s47_old
           (cd "$d" && TRITON_CACHE_DIR=$(mktemp -d) timeout -k 5 200 python "$R/docs/runs/s47/cold2.py" $t 2>&1 \
               | tr '\r' '\n' | grep -E "^$t:|Error" | tee -a "$OUT/cold2.txt"); done
       timeout -k 5 45 python docs/runs/s48/edge2.py 2>&1 | tr '\r' '\n' | grep -E "^\{|Error|Traceback" | tee "$OUT/edge2.txt" ;;
    2) gpu; bash cookbook/patches/ab.sh run 20b:1 20b:64 120b:64 2>&1 | tee "$OUT/ab.txt" ;;
    3) gpu; timeout -k 5 560 python -m pytest -q tests/test_engine.py --durations=8 2>&1 | tail -15 \
           | tee "$OUT/test_engine.txt" ;;
    *) echo "usage: s47_next_calls.sh 1|2|3"; exit 2 ;;
esac
