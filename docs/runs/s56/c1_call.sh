# s56 call 1: an H200 runs the headline table's 20b points (s44 call 1); an H100 runs the chain check and b96 A/B
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"; date -u
if [[ $G == *H200* ]]; then OUT=$OUT bash docs/runs/s44_next_calls.sh 1
else
  OUT=$OUT/chain bash docs/runs/s55/next_call.sh
  OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:96
fi
date -u
