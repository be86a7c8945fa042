set -u
R=$(pwd)
for t in main prefill_append prefill_first; do ln -sfn $R/shared scratch/ab_$t/shared; done
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
summ() { python -c "
import sys,json
for ln in sys.stdin:
    try: r=json.loads(ln)
    except Exception: print(ln.rstrip()[:300]); continue
    if r['mode']=='many': print('$1 many', r['max_slots'], 'wall', round(r['wall_s'],2), 'out_tok_s', round(r['output_tok_s']), 'med_ttft', round(r['median_ttft_s'],2), 'tpot_ms', round(r['median_tpot_ms'],2))
    else: print('$1', r['mode'], r['prompt_len'], 'chunk', r['prefill_chunk'], 'ttft', round(r['ttft_s'],3), 'gap', round(r.get('max_gap_s',0),3), 'med_ms', round(r.get('median_gap_before_ms',0),2), 'min_tok', r.get('min_tokens_during','-'), 'start', round(r['startup_s'],1))
"; }
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
(cd scratch/ab_main && timeout 120 python -m pytest -q -x tests/test_engine.py -k "decode_steps_go_on or scheduler_random" > $OUT/pytest_main.log 2>&1; echo "main pytest: $(tail -1 $OUT/pytest_main.log) t=$(el)")
for t in main prefill_first; do
  (cd scratch/ab_$t && timeout 100 python cookbook/bench_long.py pause --lengths 122880 --commit $(cat COMMIT) --out $OUT/pause_$t.jsonl | summ $t)
done; echo "t=$(el)"
for t in main prefill_append; do
  (cd scratch/ab_$t && timeout 80 python cookbook/bench_long.py ttft --lengths 32768 122880 --commit $(cat COMMIT) --out $OUT/ttft_$t.jsonl | summ $t)
done; echo "t=$(el)"
for t in main prefill_first; do
  [ $(el) -lt 380 ] && (cd scratch/ab_$t && timeout 100 python cookbook/bench_long.py many --max-slots 1024 --commit $(cat COMMIT) --out $OUT/many_$t.jsonl | summ $t)
done; echo "t=$(el)"
[ $(el) -lt 500 ] && (cd scratch/ab_main && timeout 50 python cookbook/bench_rope.py $OUT/rope.json); echo "t=$(el)"
[ $(el) -lt 530 ] && (cd scratch/ab_main && timeout 50 python cookbook/bench_long.py ttft --lengths 122880 --prefill-chunk 8192 --commit $(cat COMMIT) --out $OUT/ttft_chunk8192.jsonl | summ main); echo "t=$(el)"
[ $(el) -lt 540 ] && (cd scratch/ab_prefill_append && timeout 45 python -m pytest -q -x tests/test_model.py -k teacher_forced > $OUT/pytest_append.log 2>&1; echo "append pytest: $(tail -1 $OUT/pytest_append.log) t=$(el)")
