# Forty-second session, call 5 (the budget's last ~4 minutes): 20b b256, one run a tree (decode there runs 64-row
# MoE tiles, where bf16_m128's asynchronous MMA should gain), main then bf16_m128.
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
for t in main bf16_m128; do
    ln -sfn "$R/shared" "scratch/ab_$t/shared"
    (cd "scratch/ab_$t" && timeout -k 5 70 python cookbook/bench_decode.py --model 20b --batch 256 --tokens 1000 \
        --runs 1 --commit "$(cat COMMIT)" --out "$OUT/b256_$t.jsonl" 2>&1 | tail -1 | sed "s/^/$t /")
done
