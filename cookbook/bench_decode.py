"""Decode throughput, the seed's method: greedy, ignore_eos, N output tokens after warm-up, CUDA graphs;
tok/s = sequences x (N - 1) / (last token time - first token time); each point in its own process,
median of --runs. Dummy weights of the real shapes (no download needed).

    python cookbook/bench_decode.py --model 20b --batch 1 64 --tokens 1000 --runs 3 --out bench.jsonl
    python cookbook/bench_decode.py --model 20b --batch 1 64 --hf 100   # and HF transformers side by side
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


def gemv_tb_s():
    """Bandwidth of a large bf16 GEMV (lm_head-sized, 1.16 GB) in this process: the roofline's bytes/s."""
    import torch
    w = torch.randn(201088, 2880, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(2880, 1, device="cuda", dtype=torch.bfloat16)
    ts = []
    for _ in range(12):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); w @ x; b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return w.numel() * 2 / sorted(ts[2:])[len(ts[2:]) // 2] / 1e12


def weight_bytes(cfg):
    """(dense bytes a step reads: qkv, o, router and lm_head weights in bf16; bytes of one expert of one layer:
    4-bit codes + E8M0 scales + fp32 biases)."""
    H, D, I = cfg.hidden_size, cfg.head_dim, cfg.intermediate_size
    dense = cfg.num_hidden_layers * (H * D * (2 * cfg.num_attention_heads + 2 * cfg.num_key_value_heads)
                                     + cfg.num_local_experts * H) * 2 + cfg.vocab_size * H * 2
    return dense, 3 * I * H * (0.5 + 1 / 32) + (2 * I + H) * 4


def kv_keys(cfg, ctx):
    """Cached keys one sequence's decode step reads over all layers (128 in a sliding layer)."""
    return sum(min(ctx, 128) if t == "sliding_attention" else ctx for t in cfg.layer_types)


def step_bytes(cfg, batch, ctx):
    """Bytes one decode step must read: dense weights, the experts routed to, KV. Experts: the expected
    distinct count per layer under uniform routing (what dummy weights give), E(1-(1-k/E)^B)."""
    E, k = cfg.num_local_experts, cfg.num_experts_per_tok
    dense, expert = weight_bytes(cfg)
    distinct = E * (1 - (1 - k / E) ** batch)
    kv_row = 2 * cfg.num_key_value_heads * cfg.head_dim * 2  # K and V, bf16
    return dense + cfg.num_hidden_layers * distinct * expert + kv_keys(cfg, ctx) * kv_row * batch


def one_point(model, batch, tokens, prompt_len, tokenizer, max_slots):
    import torch
    from llm import LLM
    from model.config import GptOssConfig, gpt_oss_120b
    cfg = {"20b": GptOssConfig, "120b": gpt_oss_120b}[model]()  # "tiny" is for the --hf check only
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
    tok_s, bw = batch * (tokens - 1) / decode, gemv_tb_s()
    nbytes = step_bytes(cfg, batch, prompt_len + tokens // 2)
    return dict(model=model, batch=batch, tokens=tokens, tok_s=tok_s, ttft_s=max(o.metrics["ttft"] for o in outs),
                startup_s=startup, step_gb=nbytes / 1e9, gemv_tb_s=bw, roofline_tok_s=batch * bw * 1e12 / nbytes,
                roofline_frac=tok_s / (batch * bw * 1e12 / nbytes), gpu=torch.cuda.get_device_name(),
                date=time.strftime("%Y-%m-%d"))


def hf_point(model, batch, tokens, prompt_len):
    """HF transformers' GptOss at the same point: bf16 random weights (its experts dense bf16: 20b only fits),
    greedy, every sequence exactly `tokens` long; decode time = generate(tokens) - generate(1)."""
    import torch
    from transformers import GptOssConfig as HFConfig, GptOssForCausalLM
    from model.config import GptOssConfig, tiny_config
    cfg = {"20b": GptOssConfig, "tiny": tiny_config}[model]().to_dict()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if dev == "cuda" else torch.float32
    with torch.device(dev):
        hf = GptOssForCausalLM._from_config(HFConfig(**cfg), torch_dtype=dtype).eval()
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 199_000, (batch, prompt_len), generator=gen).to(dev)

    def run(n):
        if dev == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                          do_sample=False, pad_token_id=0)
        if dev == "cuda":
            torch.cuda.synchronize()
        assert out.shape[1] == prompt_len + n
        return time.perf_counter() - t0
    run(4)  # warm-up
    first = min(run(1) for _ in range(2))
    decode = run(tokens) - first
    return dict(model=model, batch=batch, tokens=tokens, engine="hf-transformers", tok_s=batch * (tokens - 1) / decode,
                ttft_s=first, gpu=torch.cuda.get_device_name() if dev == "cuda" else "cpu",
                date=time.strftime("%Y-%m-%d"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", nargs="+", default=["20b"], choices=["20b", "120b", "tiny"])
    ap.add_argument("--batch", nargs="+", type=int, default=[1, 64])
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-slots", type=int, default=0)
    ap.add_argument("--tokenizer", default=str(ROOT / "shared/data/o200k_base.tiktoken"))
    ap.add_argument("--out", default="")
    ap.add_argument("--commit", default="", help="recorded when git is not there (the GPU machine)")
    ap.add_argument("--hf", type=int, default=0, help="also run HF transformers' GptOss for this many tokens")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--hf-one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one_point(a.model[0], a.batch[0], a.tokens, a.prompt_len, a.tokenizer, a.max_slots)))
        return
    if a.hf_one:
        print(json.dumps(hf_point(a.model[0], a.batch[0], a.tokens, a.prompt_len)))
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
            med["roofline_frac"] = med["tok_s"] / med["roofline_tok_s"]
            print(f"{model:>5} b{batch:<4} {med['tok_s']:>9.1f} tok/s  runs {med['runs']}  "
                  f"ttft {med['ttft_s']:.3f}s  startup {med['startup_s']:.1f}s  step {med['step_gb']:.2f} GB  "
                  f"GEMV {med['gemv_tb_s']:.2f} TB/s  roofline {med['roofline_tok_s']:.0f} tok/s "
                  f"({100 * med['roofline_frac']:.0f}%)", flush=True)
            if a.hf:  # the side by side: one run (HF is ~20x slower), fewer tokens
                cmd = [sys.executable, __file__, "--hf-one", "--model", model, "--batch", str(batch), "--tokens",
                       str(a.hf), "--prompt-len", str(a.prompt_len)]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode:
                    print(p.stderr[-3000:], file=sys.stderr)
                else:
                    med["hf"] = json.loads(p.stdout.strip().splitlines()[-1])
                    print(f"      HF transformers {med['hf']['tok_s']:.1f} tok/s ({a.hf} tokens): "
                          f"this engine is {med['tok_s'] / med['hf']['tok_s']:.1f}x", flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(med) + "\n")


if __name__ == "__main__":
    main()
