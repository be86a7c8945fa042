# s55 call 1: on an H200 the 20b headline (s44 call 1); on an H100 the down's K splits below 64 tokens, then (if
# 1 or 2 splits beat the engine's 3 at 8 tokens by 3%) that patch against main at 20b b8, both orders
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"; T0=$SECONDS
G=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"); echo "$G"; date -u
if echo "$G" | grep -q H200; then
  OUT=$OUT bash docs/runs/s44_next_calls.sh 1; date -u; exit
fi
timeout -k 5 150 python cookbook/bench_moe.py --tokens 8 16 32 48 --down-splits 1 2 3 2>&1 | grep '^T=' | tee "$OUT/splits.txt"
N=$(python - "$OUT/splits.txt" <<'PY'
import sys
for line in open(sys.argv[1]):
    if line.startswith("T=8:"):
        t = [float(v) for v in line.split(":")[-1].split()]
        best = min((1, 2), key=lambda n: t[n - 1])
        print(best if t[best - 1] < 0.97 * t[2] else 0)
PY
)
echo "chosen: ${N:-none} ($((SECONDS - T0)) s)"
[ "${N:-0}" -gt 0 ] || { date -u; exit; }
for d in scratch/ab_down*lt64; do [ "$d" = "scratch/ab_down${N}lt64" ] || rm -rf "$d"; done
mv scratch/ab_main scratch/ab_amain; sed -i 's/+main/+amain/' scratch/ab_amain/COMMIT
OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:8   # amain first
mv scratch/ab_amain scratch/ab_main; sed -i 's/+amain/+main/' scratch/ab_main/COMMIT
echo "r1 took $((SECONDS - T0)) s"
OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:8   # patch first
date -u
