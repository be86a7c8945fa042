# Forty-second session, call 3: bf16_m128's MoE kernel tests on the GPU (call 2's 120 s limit cut them off while
# compiling), then 20b b64 decode (the keep gate: < 1% loss) and many:1024 for main and bf16_m128.
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"; T0=$(date +%s)
ln -sfn "$R/shared" scratch/ab_bf16_m128/shared; ln -sfn "$R/shared" scratch/ab_main/shared
(cd scratch/ab_bf16_m128 && timeout -k 5 170 python -m pytest -q tests/test_kernels.py -k "moe" > "$OUT/pytest.log" 2>&1)
echo "pytest rc $? $(tail -1 "$OUT/pytest.log") t=$(( $(date +%s) - T0 ))"
OUT=$OUT timeout -k 5 230 bash cookbook/patches/ab.sh run 20b:64; echo "t=$(( $(date +%s) - T0 ))"
[ $(( $(date +%s) - T0 )) -lt 380 ] && OUT=$OUT timeout -k 5 $(( 580 - $(date +%s) + T0 )) bash cookbook/patches/ab.sh run many:1024
echo "t=$(( $(date +%s) - T0 ))"
