# As run from scratch/ in the forty-sixth session (call 7): its git archive of b68ac2c failed on the device, so "old" ran in call 8.
# Forty-sixth session, call 7: the start-up prefill (old = b68ac2c, new = working tree), each with a fresh Triton cache
set -u
mkdir -p "$OUT"; nvidia-smi --query-gpu=name --format=csv,noheader
git archive b68ac2c | (mkdir -p /tmp/old && tar -x -C /tmp/old) && cp -r shared /tmp/old/ && cp scratch/cold.py /tmp/old/
(cd /tmp/old && TRITON_CACHE_DIR=/tmp/tc_old timeout -k 5 200 python cold.py old 2>&1 | tr '\r' '\n' | grep -E "^(old|Trace|.*Error)") | tee -a "$OUT/cold.txt"
TRITON_CACHE_DIR=/tmp/tc_new timeout -k 5 200 python scratch/cold.py new 2>&1 | tr '\r' '\n' | grep -E "^(new|Trace|.*Error)" | tee -a "$OUT/cold.txt"
timeout -k 5 150 python -m pytest -q tests/test_engine.py 2>&1 | tail -3 | tee "$OUT/test_engine.txt"
