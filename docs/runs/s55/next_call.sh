# The fifty-fifth session's plan for the next call on any GPU (~2 minutes): does `bench_moe.py --chain` (route,
# gate_up, down, add_rmsnorm per layer, in the engine's order) rank the down's K splits as the step did? End to end
# at 20b b8 (this session, machine R) 1 split lost 3.0% to main's 3; back to back the down alone was 10% faster at 1.
# A faithful proxy puts 1 split behind 3 at 8 tokens, and 1 ahead of 2 at 64 (b64: +0.3-0.4%, fifty-fourth session).
set -u; OUT=${OUT:-scratch/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"; date -u
timeout -k 5 200 python cookbook/bench_moe.py --tokens 8 16 64 --chain --down-splits 1 2 3 2>&1 | grep '^T=' \
  | tee "$OUT/chain.txt"
date -u
