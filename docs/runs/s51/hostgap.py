"""Fifty-first session: where 20b b256 spends the benchmark's step. Times the engine loop's step() and its waits on the
GPU (the pinned copy's event), then the b256 graph replayed alone. Run from the repository root on the device."""
import json, sys, tempfile, time
from pathlib import Path
import torch
sys.path.insert(0, ".")
from llm import LLM
from model.config import GptOssConfig
cfg = GptOssConfig(); d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(cfg.to_dict()))
eng = LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=256)
gen = torch.Generator().manual_seed(0)
prompts = [torch.randint(0, 199_000, (128,), generator=gen).tolist() for _ in range(256)]
eng.generate(prompts, max_tokens=16, ignore_eos=True).result()
acc = dict(step=0.0, wait=0.0, n=0, emit=0.0, stamps=[])
class TE:
    def __init__(s, e): s.e = e
    def record(s): s.e.record()
    def synchronize(s):
        t = time.perf_counter(); s.e.synchronize(); acc["wait"] += time.perf_counter() - t
eng._host = [(h, TE(e)) for h, e in eng._host]
step, emit = eng.step, eng._emit
def tstep():
    t = time.perf_counter(); step(); t2 = time.perf_counter(); acc["step"] += t2 - t; acc["n"] += 1
    acc["stamps"].append((t, t2, eng._prefilled, len(eng.running)))
def temit(*a):
    t = time.perf_counter(); emit(*a); acc["emit"] += time.perf_counter() - t
eng.step, eng._emit = tstep, temit
outs = eng.generate(prompts, max_tokens=1000, ignore_eos=True).result()
dec = max(o.metrics["decode_time"] for o in outs)
st = acc.pop("stamps")
full = [b - a for a, b, p, n in st if not p and n == 256]
print(f"tok/s {256 * 999 / dec:.0f} decode {dec:.3f}s steps {acc['n']} step-sum {acc['step']:.3f}s wait {acc['wait']:.3f}s "
      f"emit {acc['emit']:.3f}s; b256 steps {len(full)} median {sorted(full)[len(full)//2]*1e3:.3f} ms")
pre = [(b - a, n) for a, b, p, n in st if p]
print("prefill steps", [(round(x * 1e3, 1), n) for x, n in pre][:8], "first stamps", [(round((a - st[0][0]) * 1e3, 1), p, n) for a, b, p, n in st[:12]])
g = eng.graphs[(256, False)]
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for _ in range(3): g.replay()
s.record()
for _ in range(50): g.replay()
e.record(); e.synchronize()
print(f"replay b256 at ctx ~1144: {s.elapsed_time(e) / 50:.3f} ms")
eng.stop()
