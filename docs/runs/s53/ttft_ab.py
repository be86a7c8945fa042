"""TTFT of one prompt at a time, 5 repeats per length, median; one engine per process. Run inside a tree."""
import json, statistics, sys, time
sys.path.insert(0, "."); sys.path.insert(0, "cookbook")
from bench_long import engine, prompts
tree, out = sys.argv[1], sys.argv[2]
eng, startup = engine("20b", "shared/data/o200k_base.tiktoken", max_slots=8)
for L in (1536, 2048, 3072, 4096, 8192):
    ps = prompts(6, L, 7)
    eng.generate(ps[0], max_tokens=1).result()  # first one at this length: not timed
    t = [eng.generate(p, max_tokens=1, ignore_eos=True).result().metrics["ttft"] for p in ps[1:]]
    r = dict(tree=tree, length=L, ttft_ms=statistics.median(t) * 1e3, runs_ms=[round(x * 1e3, 3) for x in t],
             startup_s=startup)
    print(json.dumps(r), flush=True)
    open(out, "a").write(json.dumps(r) + "\n")
eng.stop()
