# s53 call 1: on an H200 the headline 20b table; on an H100 the b1/b64/b256 profiles with the fixed fill + dense256
set -u; mkdir -p $OUT
G=$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader); echo "$G" | tee $OUT/gpu.txt
if echo "$G" | grep -q H200; then
  OUT=$OUT bash docs/runs/s44_next_calls.sh 1
else
  timeout 300 python cookbook/profile_step.py --model 20b --batch 1 64 256 --out $OUT/profile_20b.json 2>&1 \
    | tr '\r' '\n' | grep -v "it/s\]" > $OUT/profile_stdout.txt; tail -60 $OUT/profile_stdout.txt
  timeout 250 python cookbook/dense_variants/dense256.py --tokens 160 256 > $OUT/dense256.txt 2>&1; cat $OUT/dense256.txt
fi
