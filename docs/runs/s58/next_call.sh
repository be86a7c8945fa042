# The fifty-eighth session's short call, never run (13 tries got no machine). After the prep in the header of
# docs/runs/s57/next_calls.sh: run(command="bash docs/runs/s58/next_call.sh", carry=["shared", "scratch"],
# kind="nvidia-h200", timeout_s=420). ~6 min warm; fits ~430 s of device time with the start.
# On an H200: 20b b96, main (3 down splits from 80 tokens, 13e1746) against d9cb215 (2), both orders.
# On an H100 (the rule was timed there already): the 20b b1 and b64 profiles, next_calls.sh 2.
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu.txt"; date -u
if grep -q H200 "$OUT/gpu.txt"; then
    for d in scratch/ab_*/; do [ "$d" != scratch/ab_old/ ] && [ -f "$d/COMMIT" ] && mv "$d/COMMIT" "$d/COMMIT.off"; done
    [ -f scratch/ab_main/COMMIT.off ] && mv scratch/ab_main/COMMIT.off scratch/ab_main/COMMIT
    OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:96
else bash docs/runs/s57/next_calls.sh 2; fi
date -u
