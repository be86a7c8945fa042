# The fifty-ninth session's device calls, as run (run(..., carry=["shared", "scratch"]); c1 named nvidia-h200, and an
# H100 came; c2 and c3 ran warm on it). Outputs: c1/, c2/, c3/ beside this file.
case "${1:-}" in
    1) if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then bash docs/runs/s57/next_calls.sh 1
       else bash docs/runs/s57/next_calls.sh 2; fi ;;  # the H100 branch ran: the 20b b1 and b64 profiles
    2) mkdir -p $OUT; nvidia-smi --query-gpu=name --format=csv,noheader
       timeout 330 python -m pytest -q -x tests/ 2>&1 | tail -15 | tee $OUT/pytest_gpu.txt
       timeout 150 python cookbook/bench_decode.py --model 20b --batch 1 --tokens 1000 --runs 3 --commit cfff533 \
           --out $OUT/b1.jsonl 2>&1 | tail -2 ;;
    3) mkdir -p $OUT; timeout 420 python -m pytest -q tests/ -p no:cacheprovider 2>&1 > $OUT/pytest_full.txt
       tail -8 $OUT/pytest_full.txt ;;  # cut at 420 s, 70% of the way: only the progress dots came back
esac
