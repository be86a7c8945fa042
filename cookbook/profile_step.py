"""Where one decode step's time goes: per-kernel GPU time (torch profiler, eager step) and the CUDA
graph replay time, for dummy weights. python cookbook/profile_step.py --model 20b --batch 1 64"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from llm import LLM  # noqa: E402
from model.config import GptOssConfig, gpt_oss_120b  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="20b")
ap.add_argument("--batch", nargs="+", type=int, default=[1, 64])
ap.add_argument("--context", type=int, default=1000)
ap.add_argument("--tokenizer", default=str(ROOT / "shared/data/o200k_base.tiktoken"))
a = ap.parse_args()
cfg = gpt_oss_120b() if a.model == "120b" else GptOssConfig()
d = Path(tempfile.mkdtemp())
(d / "config.json").write_text(json.dumps(cfg.to_dict()))
eng = LLM(str(d), load_format="dummy", tokenizer=a.tokenizer, max_slots=max(a.batch))
for B in a.batch:
    prompts = [list(range(100 + b, 100 + b + a.context)) for b in range(B)]
    eng.generate(prompts, max_tokens=4, ignore_eos=True).result()  # leaves B sequences' inputs in place
    Bp = min(b for b in eng.graphs if b >= B)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            eng._decode_body(Bp)
        torch.cuda.synchronize()
    print(f"== {a.model} batch {B}: eager step, GPU time per kernel (3 steps) ==")
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=18, max_name_column_width=60))
    g = eng.graphs[Bp]
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        g.replay()
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) / 20 * 1e3
    print(f"graph replay: {ms:.3f} ms/step -> {B / ms * 1e3:.0f} tok/s without host work")
eng.stop()
