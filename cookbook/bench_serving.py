"""Serving with requests arriving over time (Poisson) on dummy 20b weights: output tok/s and median time
per output token (TPOT) per arrival rate, plus start-up time with the default settings.

    python cookbook/bench_serving.py --rates 2 8 32 --requests 64 --prompt-len 128 --output-len 256
"""
import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from llm import LLM  # noqa: E402
from model.config import GptOssConfig, gpt_oss_120b  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="20b")
ap.add_argument("--rates", nargs="+", type=float, default=[2, 8, 32])
ap.add_argument("--requests", type=int, default=64)
ap.add_argument("--prompt-len", type=int, default=128)
ap.add_argument("--output-len", type=int, default=256)
ap.add_argument("--tokenizer", default=str(ROOT / "shared/data/o200k_base.tiktoken"))
a = ap.parse_args()
d = Path(tempfile.mkdtemp())
(d / "config.json").write_text(json.dumps((gpt_oss_120b() if a.model == "120b" else GptOssConfig()).to_dict()))
t0 = time.perf_counter()
eng = LLM(str(d), load_format="dummy", tokenizer=a.tokenizer)
first = eng.generate([1, 2, 3], max_tokens=1).result()
print(f"start-up to first token (default settings, max_slots {eng.max_slots}): {time.perf_counter() - t0:.1f} s")
rng = random.Random(0)
for rate in a.rates:
    futs, t_start = [], time.perf_counter()
    for i in range(a.requests):
        time.sleep(rng.expovariate(rate))
        prompt = [rng.randrange(199_000) for _ in range(a.prompt_len)]
        futs.append(eng.generate(prompt, max_tokens=a.output_len, ignore_eos=True))
    outs = [f.result() for f in futs]
    wall = time.perf_counter() - t_start
    tpot = statistics.median(o.metrics["decode_time"] / (len(o.token_ids) - 1) for o in outs) * 1e3
    ttft = statistics.median(o.metrics["ttft"] for o in outs) * 1e3
    print(f"rate {rate:5.1f} req/s: {a.requests * a.output_len / wall:8.0f} output tok/s, median TPOT {tpot:6.2f} ms, "
          f"median TTFT {ttft:7.1f} ms, wall {wall:.1f} s", flush=True)
eng.stop()
