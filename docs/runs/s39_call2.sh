set -u
R=$(pwd)
for t in main prefill_first; do ln -sfn $R/shared scratch/ab_$t/shared; done
summ() { python -c "
import sys,json
for ln in sys.stdin:
    try: r=json.loads(ln)
    except Exception: print(ln.rstrip()[:300]); continue
    if r['mode']=='many': print('$1 many', r['max_slots'], 'wall', round(r['wall_s'],2), 'out_tok_s', round(r['output_tok_s']), 'med_ttft', round(r['median_ttft_s'],2), 'tpot_ms', round(r['median_tpot_ms'],2))
    else: print('$1', r['mode'], r['prompt_len'], 'chunk', r['prefill_chunk'], 'ttft', round(r['ttft_s'],3), 'gap', round(r.get('max_gap_s',0),3), 'med_ms', round(r.get('median_gap_before_ms',0),2), 'min_tok', r.get('min_tokens_during','-'), 'start', round(r['startup_s'],1))
"; }
T0=$(date +%s); el() { echo $(( $(date +%s)-T0 )); }
for c in 4096 8192; do for t in prefill_first main; do
  (cd scratch/ab_$t && timeout 110 python cookbook/bench_long.py many --max-slots 1024 --prefill-chunk $c --commit $(cat COMMIT) --out $OUT/many_${t}_$c.jsonl | summ "$t chunk$c")
done; done; echo "t=$(el)"
(cd scratch/ab_main && timeout 60 python cookbook/bench_long.py pause --lengths 122880 --prefill-chunk 8192 --commit $(cat COMMIT) --out $OUT/pause_main_8192.jsonl | summ main); echo "t=$(el)"
for p in 1 64; do
  [ $(el) -lt 420 ] && (cd scratch/ab_main && timeout 100 python cookbook/bench_decode.py --model 20b --batch $p --tokens 1000 --runs 3 --commit $(cat COMMIT) --out $OUT/main_20b_b$p.jsonl 2>&1 | tail -1)
done; echo "t=$(el)"
