set -u
python scratch/prefill_attn.py 0,8192,61440,118784 $OUT/prefill_attn3.jsonl 2>&1 | python -c "
import sys,json
for ln in sys.stdin:
    try: r=json.loads(ln)
    except Exception: print(ln.rstrip()[:300]); continue
    print(r['start'],r['kernel'],r['block_t'],r['block_n'],r['warps'],r['stages'],r['us'],r['tflops'],r['maxdiff_vs_first'])
"
(cd scratch/ab_prefill_tiles && ln -sfn /$PWD/../../shared shared && timeout 170 python -m pytest -q -x tests/test_kernels.py tests/test_engine.py -k "attention or greedy_float32 or dummy_20b or logprobs" > $OUT/pytest_prefill_tiles.log 2>&1; tail -2 $OUT/pytest_prefill_tiles.log)
for t in main prefill_tiles; do
  (cd scratch/ab_$t && ln -sfn $(cd ../.. && pwd)/shared shared && timeout 150 python cookbook/bench_long.py ttft --lengths 8192 32768 122880 --commit $(cat COMMIT) --out $OUT/ttft_$t.jsonl | python -c "
import sys,json
for ln in sys.stdin:
    try: r=json.loads(ln); print('$t', r['prompt_len'], round(r['ttft_s'],3), round(r['prefill_tok_s']))
    except Exception: print(ln.rstrip()[:300])
")
done
