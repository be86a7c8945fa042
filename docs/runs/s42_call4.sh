# Forty-second session, call 4: TTFT at 32,768 twice more per tree (call 2 had one run each), 20b b1, then
# many:512 (many:1024 printed nothing on this 80 GB H100 in call 3: its KV cache does not fit).
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"; T0=$(date +%s)
ln -sfn "$R/shared" scratch/ab_bf16_m128/shared; ln -sfn "$R/shared" scratch/ab_main/shared
OUT=$OUT timeout -k 5 200 bash cookbook/patches/ab.sh run ttft:32768 ttft:32768; echo "t=$(( $(date +%s) - T0 ))"
OUT=$OUT timeout -k 5 150 bash cookbook/patches/ab.sh run 20b:1; echo "t=$(( $(date +%s) - T0 ))"
[ $(( $(date +%s) - T0 )) -lt 340 ] && (cd scratch/ab_main && timeout -k 5 $(( 580 - $(date +%s) + T0 )) python \
    cookbook/bench_long.py many --model 20b --max-slots 512 --commit main --out "$OUT/many_main.jsonl" 2>&1 | tail -3)
[ $(( $(date +%s) - T0 )) -lt 460 ] && (cd scratch/ab_bf16_m128 && timeout -k 5 $(( 585 - $(date +%s) + T0 )) python \
    cookbook/bench_long.py many --model 20b --max-slots 512 --commit m128 --out "$OUT/many_m128.jsonl" 2>&1 | tail -3)
echo "t=$(( $(date +%s) - T0 ))"
