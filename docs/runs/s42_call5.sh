# Forty-second session, last call (~4 minutes of budget left): fp16x (the MoE's input and act in fp16, so the MMA
# reads x from its cp.async buffer, asynchronously, with main's fp16 weight decode; 128-row tiles above 128
# pairs an expert) against main: 20b b64 one run a tree (the gate), then TTFT at 32,768 while time is left.
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"; T0=$(date +%s)
for t in main fp16x; do
    ln -sfn "$R/shared" "scratch/ab_$t/shared"
    (cd "scratch/ab_$t" && timeout -k 5 80 python cookbook/bench_decode.py --model 20b --batch 64 --tokens 1000 \
        --runs 1 --commit "$(cat COMMIT)" --out "$OUT/b64_$t.jsonl" 2>&1 | tail -1 | sed "s/^/$t /")
done; echo "t=$(( $(date +%s) - T0 ))"
for t in fp16x main; do
    (cd "scratch/ab_$t" && timeout -k 5 40 python cookbook/bench_long.py ttft --model 20b --lengths 32768 \
        --commit "$(cat COMMIT)" --out "$OUT/ttft_$t.jsonl" 2>&1 | tail -1 | sed "s/^/$t /")
done; echo "t=$(( $(date +%s) - T0 ))"
