# As run from scratch/ in the forty-sixth session (call 2; the "reserve" its probe prints is the old formula).
# Forty-sixth session, call 2: the scoring fix (512-row scored chunks, logsumexp in 64-row blocks, reserve >= 1 GiB)
set -u
C=$(git rev-parse --short HEAD); mkdir -p "$OUT"; nvidia-smi --query-gpu=name --format=csv,noheader; echo "HEAD $C + diff"
git archive c30ecb4 | (mkdir -p /tmp/old && tar -x -C /tmp/old) && cp -r shared /tmp/old/ && cp scratch/mem_score.py /tmp/old/
echo "== old (c30ecb4) util 0.9" | tee -a "$OUT/mem_score.txt"
(cd /tmp/old && timeout -k 5 170 python mem_score.py 8 8192 0.9 2>&1 | tr '\r' '\n' | grep -E "^(slots|  |Trace|.*Error)" | tee -a "$OUT/mem_score.txt")
for cfg in "8 8192 0.9" "8 8192 1.0" "8 512 1.0"; do
    echo "== new $cfg" | tee -a "$OUT/mem_score.txt"
    timeout -k 5 170 python scratch/mem_score.py $cfg 2>&1 | tr '\r' '\n' | grep -E "^(slots|  |Trace|.*Error)" | tee -a "$OUT/mem_score.txt"
done
timeout -k 5 240 python -m pytest -q tests/test_engine.py 2>&1 | tail -4 | tee "$OUT/test_engine.txt"
