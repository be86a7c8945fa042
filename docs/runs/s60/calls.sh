# The sixtieth session's device calls (run(..., carry=["shared", "scratch"]); scratch/ prepared as in
# docs/runs/s57/next_calls.sh's header). Outputs: cN/ beside this file.
#   1-3 (named nvidia-h200; an H100 came, warm for 2 and 3): docs/runs/s59/next_calls.sh 1, then 2, then
#     docs/runs/s57/next_calls.sh 3 (120b b256 against untiles256, one order)
#   4: if an H200 comes, docs/runs/s57/next_calls.sh 1 (20b b96 both orders and b80 against d9cb215); on an H100
#     nothing (the rule was timed on one in s57). 5 (warm H200): docs/runs/s57/next_calls.sh 2 (b1, b64 profiles)
#   6: as 4 on an H200; on an H100 the 20b table at today's code (docs/runs/s44_next_calls.sh 1: b1, b8, b64, b256)
# As run: 4 twice (c4/, c5/: H100s, nothing run), 6 once (c6/: an H100, the 20b table), then warm on that machine:
#   7 (c7/): mkdir -p $OUT; timeout -k 5 320 python cookbook/bench_decode.py --model 120b --batch 1 64 --tokens 1000
#            --runs 3 --commit 7a769e9 --out $OUT/bench_120b.jsonl
#   8, 9 (c8/, c9/): timeout -k 5 160 python cookbook/bench_long.py ttft --model 20b (then 120b) --lengths 122880
#            --commit 7a769e9 --out $OUT/ttft_20b.jsonl (ttft_120b.jsonl)
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"
case "${1:-}" in
    4) if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
           OUT=$OUT bash docs/runs/s57/next_calls.sh 1
       else nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"; echo "not an H200: nothing run"; fi ;;
    6) if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then OUT=$OUT bash docs/runs/s57/next_calls.sh 1
       else OUT=$OUT bash docs/runs/s44_next_calls.sh 1; fi ;;
    5) OUT=$OUT bash docs/runs/s57/next_calls.sh 2 ;;
    *) echo "usage: calls.sh 4|5|6 (1-3 ran as written above)"; exit 2 ;;
esac
