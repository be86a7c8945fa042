"""Decode throughput, the seed's method: greedy, ignore_eos, N output tokens after warm-up, CUDA graphs;
tok/s = sequences x (N - 1) / (last token time - first token time); each point in its own process,
median of --runs. Dummy weights of the real shapes (no download needed).

    python cookbook/bench_decode.py --model 20b --batch 1 64 --tokens 1000 --runs 3 --out bench.jsonl
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one_point(model, batch, tokens, prompt_len, tokenizer, max_slots):
    import torch
    from llm import LLM
    from model.config import GptOssConfig, gpt_oss_120b
    cfg = gpt_oss_120b() if model == "120b" else GptOssConfig()
    d = Path(tempfile.mkdtemp())
    (d / "config.json").write_text(json.dumps(cfg.to_dict()))
    t0 = time.perf_counter()
    eng = LLM(str(d), load_format="dummy", tokenizer=tokenizer, max_slots=max_slots or max(batch, 1))
    startup = time.perf_counter() - t0
    gen = torch.Generator().manual_seed(0)
    prompts = [torch.randint(0, 199_000, (prompt_len,), generator=gen).tolist() for _ in range(batch)]
    eng.generate(prompts, max_tokens=16, ignore_eos=True).result()  # warm-up
    outs = eng.generate(prompts, max_tokens=tokens, ignore_eos=True).result()
    decode = max(o.metrics["decode_time"] for o in outs)
    eng.stop()
    assert all(len(o.token_ids) == tokens for o in outs)
    return dict(model=model, batch=batch, tokens=tokens, tok_s=batch * (tokens - 1) / decode,
                ttft_s=max(o.metrics["ttft"] for o in outs), startup_s=startup,
                gpu=torch.cuda.get_device_name(), date=time.strftime("%Y-%m-%d"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", nargs="+", default=["20b"])
    ap.add_argument("--batch", nargs="+", type=int, default=[1, 64])
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-slots", type=int, default=0)
    ap.add_argument("--tokenizer", default=str(ROOT / "shared/data/o200k_base.tiktoken"))
    ap.add_argument("--out", default="")
    ap.add_argument("--commit", default="", help="recorded when git is not there (the GPU machine)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one_point(a.model[0], a.batch[0], a.tokens, a.prompt_len, a.tokenizer, a.max_slots)))
        return
    commit = a.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                        text=True).stdout.strip()
    for model in a.model:
        for batch in a.batch:
            runs = []
            for _ in range(a.runs):  # separate processes: per-process compile and allocation state
                cmd = [sys.executable, __file__, "--one", "--model", model, "--batch", str(batch), "--tokens",
                       str(a.tokens), "--prompt-len", str(a.prompt_len), "--tokenizer", a.tokenizer,
                       "--max-slots", str(a.max_slots)]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode:
                    print(p.stderr[-3000:], file=sys.stderr)
                    raise SystemExit(f"run failed: {model} b{batch}")
                runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
            med = dict(runs[0], tok_s=statistics.median(r["tok_s"] for r in runs),
                       ttft_s=statistics.median(r["ttft_s"] for r in runs),
                       startup_s=statistics.median(r["startup_s"] for r in runs),
                       runs=[round(r["tok_s"], 1) for r in runs], commit=commit)
            print(f"{model:>5} b{batch:<4} {med['tok_s']:>9.1f} tok/s  runs {med['runs']}  "
                  f"ttft {med['ttft_s']:.3f}s  startup {med['startup_s']:.1f}s", flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(med) + "\n")


if __name__ == "__main__":
    main()
