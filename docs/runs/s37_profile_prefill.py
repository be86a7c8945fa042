"""GPU time per kernel name while one prompt of N tokens prefills (dummy 20b): torch profiler over the engine's
background thread. python scratch/profile_prefill.py 16384 out.json"""
import json, sys, tempfile, time
from collections import defaultdict
from pathlib import Path
import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from llm import LLM
from model.config import GptOssConfig

N = int(sys.argv[1])
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
eng = LLM(str(d), load_format="dummy", tokenizer=str(Path(__file__).resolve().parents[1] / "shared/data/o200k_base.tiktoken"))
import random
rng = random.Random(0)
eng.generate([rng.randrange(199000) for _ in range(8199)], max_tokens=2).result()
p = [rng.randrange(199000) for _ in range(N)]
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU]) as prof:
    t0 = time.perf_counter()
    out = eng.generate(p, max_tokens=1, ignore_eos=True).result()
    wall = time.perf_counter() - t0
eng.stop()
tot = defaultdict(lambda: [0.0, 0])
for e in prof.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        tot[e.name][0] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        tot[e.name][1] += 1
rows = sorted(tot.items(), key=lambda kv: -kv[1][0])
s = sum(v[0] for v in tot.values())
print(f"prompt {N}: ttft {out.metrics['ttft']:.3f} s, wall {wall:.3f} s, kernels' sum {s / 1e6:.3f} s")
for name, (us, n) in rows[:25]:
    print(f"{us / 1e3:10.1f} ms {100 * us / s:5.1f}% {n:6d}  {name[:110]}")
if len(sys.argv) > 2:
    Path(sys.argv[2]).write_text(json.dumps(dict(n=N, ttft=out.metrics["ttft"], wall=wall,
                                                 kernels={k: v for k, v in rows})))
