"""The two later goals of shared/ANCHORS.md on dummy weights: time to first token of one long prompt, and output
tok/s when many requests arrive at once. Each engine runs in its own process; one JSON line per point.

    python cookbook/bench_long.py ttft --lengths 8192 32768 122880             # one prompt at a time
    python cookbook/bench_long.py many --requests 1000 --max-slots 256 1024     # 1,000 x (1,000 in + 1,000 out)
    python cookbook/bench_long.py pause --streams 8 --lengths 32768 122880      # streams while a prompt prefills

ttft: after a warm-up prompt of two prefill chunks, each length is one request of random token ids with
max_tokens=1, alone in the engine; TTFT is the engine's own (queue to first token) and wall the generate call.
many: every request submitted at once by one generate call (distinct random prompts, ignore_eos); output tok/s =
requests x output tokens / wall time of that call, prefill included, as vLLM's offline throughput counts it.
pause: `--streams` requests decode (`engine.stream`, one thread each); once each has 16 tokens, one long prompt
arrives. Reported: its TTFT, the streams' longest gap between two tokens across that prefill, their median gap
before it, and the fewest tokens a stream got during it (0 and a gap of the whole TTFT: streams wait for prefills).
"""
import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common import emit  # noqa: E402  (cookbook/, the script's folder)


def engine(model, tokenizer, **options):
    from llm import LLM
    from model.config import GptOssConfig, gpt_oss_120b, tiny_config
    cfg = {"20b": GptOssConfig, "120b": gpt_oss_120b, "tiny": tiny_config}[model]()
    d = Path(tempfile.mkdtemp())
    (d / "config.json").write_text(json.dumps(cfg.to_dict()))
    t0 = time.perf_counter()
    options = {k: v for k, v in options.items() if v is not None}  # None: the engine's default
    eng = LLM(str(d), load_format="dummy", tokenizer=tokenizer, **options)
    return eng, time.perf_counter() - t0


def prompts(n, length, seed):
    rng = random.Random(seed)
    return [[rng.randrange(199_000) for _ in range(length)] for _ in range(n)]


def prefill_engine(a, length, slots):  # the engine, its prefill compiled by a prompt of two chunks (or `length`)
    eng, startup = engine(a.model, a.tokenizer, max_slots=slots, prefill_chunk=a.prefill_chunk)
    eng.generate(prompts(1, min(2 * eng.prefill_chunk + 7, length), 1)[0], max_tokens=2).result()
    return eng, startup


def ttft_point(a, length):
    eng, startup = prefill_engine(a, length, a.max_slots[0])
    p = prompts(1, length, 2)[0]
    t0 = time.perf_counter()
    out = eng.generate(p, max_tokens=1, ignore_eos=True).result()
    wall = time.perf_counter() - t0
    eng.stop()
    return dict(mode="ttft", prompt_len=length, ttft_s=out.metrics["ttft"], wall_s=wall,
                prefill_tok_s=length / out.metrics["ttft"], startup_s=startup, prefill_chunk=eng.prefill_chunk)


def many_point(a, slots):
    eng, startup = engine(a.model, a.tokenizer, max_slots=slots, prefill_chunk=a.prefill_chunk)
    eng.generate(prompts(min(slots, 8), 64, 1), max_tokens=4, ignore_eos=True).result()  # warm-up
    ps = prompts(a.requests, a.prompt_len, 3)
    t0 = time.perf_counter()
    outs = eng.generate(ps, max_tokens=a.output_len, ignore_eos=True).result()
    wall = time.perf_counter() - t0
    eng.stop()
    out_tokens = sum(len(o.token_ids) for o in outs)
    assert out_tokens == a.requests * a.output_len, f"{out_tokens} output tokens, expected {a.requests * a.output_len}"
    return dict(mode="many", requests=a.requests, prompt_len=a.prompt_len, output_len=a.output_len, max_slots=slots,
                wall_s=wall, output_tok_s=out_tokens / wall,
                total_tok_s=(out_tokens + a.requests * a.prompt_len) / wall,
                median_ttft_s=statistics.median(o.metrics["ttft"] for o in outs),
                median_tpot_ms=statistics.median(o.metrics["decode_time"] / (len(o.token_ids) - 1) for o in outs) * 1e3,
                startup_s=startup, kv_tokens=eng.kv_tokens)


def pause_point(a, length):
    eng, startup = prefill_engine(a, length, max(a.max_slots[0], a.streams + 1))
    times, done = [[] for _ in range(a.streams)], threading.Event()

    def stream(i, p):  # leaving the loop closes the generator, which aborts the request
        for _ in eng.stream(p, max_tokens=a.output_len, ignore_eos=True):
            times[i].append(time.perf_counter())
            if done.is_set():
                break

    threads = [threading.Thread(target=stream, args=(i, p)) for i, p in enumerate(prompts(a.streams, a.prompt_len, 3))]
    for t in threads:
        t.start()
    while min(len(t) for t in times) < 16 and all(t.is_alive() for t in threads):
        time.sleep(0.01)
    t0 = time.perf_counter()
    out = eng.generate(prompts(1, length, 2)[0], max_tokens=1, ignore_eos=True).result()
    t1 = time.perf_counter()
    while any(t.is_alive() and ts[-1] <= t1 for t, ts in zip(threads, times)):  # a token after t1 closes the gap
        time.sleep(0.01)
    done.set()
    for t in threads:
        t.join()
    eng.stop()
    gaps = [(y - x, x, y) for ts in times for x, y in zip(ts, ts[1:])]  # (gap, from, to)
    assert all(len(ts) < a.output_len for ts in times), "a stream ended before the prefill did: raise --output-len"
    return dict(mode="pause", prompt_len=length, streams=a.streams, ttft_s=out.metrics["ttft"], wall_s=t1 - t0,
                max_gap_s=max(g for g, x, y in gaps if y > t0 and x < t1),
                median_gap_before_ms=statistics.median(g for g, x, y in gaps if y <= t0) * 1e3,
                min_tokens_during=min(sum(t0 < x <= t1 for x in ts) for ts in times), startup_s=startup,
                prefill_chunk=eng.prefill_chunk)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["ttft", "many", "pause"])
    ap.add_argument("--model", default="20b", choices=["20b", "120b", "tiny"])
    ap.add_argument("--lengths", nargs="+", type=int, default=[8192, 32768, 122880])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--prompt-len", type=int, default=1000)
    ap.add_argument("--output-len", type=int, default=1000)
    ap.add_argument("--max-slots", nargs="+", type=int, default=[256])
    ap.add_argument("--streams", type=int, default=8)
    ap.add_argument("--prefill-chunk", type=int, default=None, help="default: the engine's")
    ap.add_argument("--tokenizer", default=str(ROOT / "shared/data/o200k_base.tiktoken"))
    ap.add_argument("--out", default="")
    ap.add_argument("--commit", default="", help="recorded when git is not there (the GPU machine)")
    ap.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)  # the child: one length or slot count
    a = ap.parse_args()
    if a.one:
        point = dict(ttft=ttft_point, many=many_point, pause=pause_point)[a.mode]
        print("RESULT " + json.dumps(point(a, a.one)), flush=True)
        return
    for x in a.max_slots if a.mode == "many" else a.lengths:
        cmd = [sys.executable, __file__] + sys.argv[1:] + ["--one", str(x)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
        if run.returncode or not lines:
            print(f"{a.mode} {x}: failed (exit {run.returncode})\n{run.stderr[-3000:]}", flush=True)
            continue
        r = json.loads(lines[-1][7:]) | dict(model=a.model, commit=a.commit, date=time.strftime("%Y-%m-%d %H:%M"))
        import torch
        r["gpu"] = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
        emit(r, a.out)


if __name__ == "__main__":
    main()
