"""Where one decode step's time goes (benchmark, not a test), dummy weights on the GPU:
per kernel family, GPU time per step (torch profiler over eager steps; each kernel's span less its overlap
with the kernels before it, see exclusive_us), the bytes it must read (experts counted from the step's own
routing), achieved GB/s and % of a bf16 GEMV measured in the same process; the CUDA-graph replay time, and
the launch and host gaps (replay minus the kernels' sum).

    python cookbook/profile_step.py --model 20b --batch 1 64 --out profile.json
    python cookbook/plot_perf.py profile.json bench.jsonl   # docs/roofline.png, docs/decode_speed.png
"""
import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "cookbook"))
from bench_decode import gemv_tb_s, kv_keys, weight_bytes  # noqa: E402
from llm import LLM, SamplingParams  # noqa: E402
from model import ops  # noqa: E402
from model.config import GptOssConfig, gpt_oss_120b  # noqa: E402

FAMILIES = [("_moe_kernel", "MoE GEMMs (MXFP4)"), ("_attention_kernel", "attention"),
            ("_add_rmsnorm", "add + RMSNorm"), ("_rope_kv", "RoPE + KV append"), ("_topk", "routing"),
            ("_tiles", "routing"), ("_sample", "sampling"), ("ArgMax", "sampling")]  # torch.argmax: greedy under 64


def family(name):
    return next((f for key, f in FAMILIES if key in name), "dense GEMVs (cuBLAS, split-K) + torch ops")


def family_bytes_flops(cfg, B, ctx, distinct, splits):
    """Bytes each family must read (weights once, KV, logits) and its FLOPs, for one step of B tokens."""
    H, D, E, k, L = cfg.hidden_size, cfg.head_dim, cfg.num_local_experts, cfg.num_experts_per_tok, cfg.num_hidden_layers
    nh, nkv, I, V = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.intermediate_size, cfg.vocab_size
    dense, expert = weight_bytes(cfg)  # dense bf16 bytes = 2 x its weights, so 2 x B x weights FLOPs = B x dense
    keys = kv_keys(cfg, ctx)
    return {"dense GEMVs (cuBLAS, split-K) + torch ops": (dense, B * dense),
            "MoE GEMMs (MXFP4)": (sum(distinct) * expert, 2 * B * k * L * 3 * I * H),
            "attention": (keys * B * 2 * nkv * D * 2, 4 * B * nh * D * keys),
            "add + RMSNorm": (2 * L * B * H * (6 + 2 * k * splits), 0),  # bf16 partial rows
            "RoPE + KV append": (L * B * (nh + 2 * nkv) * D * 4, 0),
            "routing": (L * B * E * 2, 0), "sampling": (B * V * 4, 0)}


def exclusive_us(trace, steps):
    """{kernel name: us per step it adds to the stream}, from a chrome trace of the torch profiler: each span
    minus its overlap with the spans before it. With programmatic dependent launch a kernel starts while the
    one before it runs and waits at its first statement, so its own span counts that wait twice."""
    ev = sorted((e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") in
                 ("kernel", "gpu_memcpy", "gpu_memset")), key=lambda e: e["ts"])
    out, busy_to = defaultdict(float), float("-inf")
    for e in ev:
        out[e["name"]] += max(0.0, e["ts"] + e["dur"] - max(e["ts"], busy_to)) / steps
        busy_to = max(busy_to, e["ts"] + e["dur"])
    return out


def fill_batch(eng, B, ctx, tail=8):
    """Runs B sequences of ctx tokens so that all B decode together in the last `tail` steps, which leaves their
    decode inputs in the static buffers; returns the captured batch size that serves B. Prefill chunks and decode
    steps take turns (llm.step): the sequence whose prompt ends in chunk c of P decodes P - 1 - c steps between
    chunks, so max_tokens = P - c + tail ends all B at one step (4 tokens each left 256 apart: s52). Random
    tokens, as bench_decode.py's: runs of consecutive ids routed 256 sequences to 19.8 experts a layer (s51)."""
    gen = torch.Generator().manual_seed(0)
    prompts = [torch.randint(0, 199_000, (ctx,), generator=gen).tolist() for _ in range(B)]
    P, chunk = -(-B * ctx // eng.prefill_chunk), lambda i: -(-(i + 1) * ctx // eng.prefill_chunk) - 1
    eng.generate(prompts, [SamplingParams(max_tokens=P - chunk(i) + tail, ignore_eos=True) for i in range(B)]).result()
    assert len(eng._last_batch[0]) == B, (f"the last decode step ran {len(eng._last_batch[0])} of {B} sequences: "
                                          f"{eng.kv_tokens:,} KV tokens held too few at once (try a shorter --context)")
    return min(b for b, s in eng.graphs if b >= B and not s)


def dummy_engine(doc):
    """Parses --model --batch --context --tokenizer --out; returns them, the config and an engine with dummy
    weights whose graphs cover the largest batch."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--model", default="20b")
    ap.add_argument("--batch", nargs="+", type=int, default=[1, 64])
    ap.add_argument("--context", type=int, default=1000)
    ap.add_argument("--tokenizer", default=str(ROOT / "shared/data/o200k_base.tiktoken"))
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    cfg = gpt_oss_120b() if a.model == "120b" else GptOssConfig()
    d = Path(tempfile.mkdtemp())
    (d / "config.json").write_text(json.dumps(cfg.to_dict()))
    return a, cfg, LLM(str(d), load_format="dummy", tokenizer=a.tokenizer, max_slots=max(a.batch))


def profile_batch(eng, cfg, B, ctx, bw):
    Bp = fill_batch(eng, B, ctx)
    experts, n_tiles, rows, route = [], [], [], ops.moe_route

    def recording(x, wr, br, top_k, block_m, one=False):  # one eager step with the routing recorded: the experts
        out = route(x, wr, br, top_k, block_m, one)  # it really reads
        if one:  # the router's [1, S, EP] partials, then the top-k launch's ids where there is one (over 32 experts)
            experts.append(out[1] if out[1].dim() == 1 else out[0].sum(1)[0, :wr.shape[0]].topk(top_k).indices)
        else:  # the tile table: expert or -1 per tile
            experts.append(out[0][0][out[0][0] >= 0])
        n_tiles.append(top_k if one else out[0].shape[1])
        rows.append(block_m)
        return out
    ops.moe_route = recording
    eng._decode_body(Bp, False)
    ops.moe_route = route
    distinct = [int(e.unique().numel()) for e in experts]
    splits, _ = ops.down_splits(Bp, n_tiles[0], cfg.hidden_size, cfg.intermediate_size,  # rows per pair
                                eng.device, rows[0])
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            eng._decode_body(Bp, False)
        torch.cuda.synchronize()
    trace = Path(tempfile.mkdtemp()) / "trace.json"
    prof.export_chrome_trace(str(trace))
    excl = exclusive_us(json.loads(trace.read_text()), 3)
    us, kernels = defaultdict(float), []
    for ev in prof.key_averages():
        if ev.device_time_total > 0:
            own = excl.get(ev.key, ev.device_time_total / 3)  # the span where the trace lacks the kernel
            us[family(ev.key)] += own
            kernels.append(dict(name=ev.key[:120], calls=ev.count / 3, us=own, span_us=ev.device_time_total / 3))
    g, start, end = eng.graphs[(Bp, False)], torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        g.replay()
    start.record()
    for _ in range(20):
        g.replay()
    end.record()
    end.synchronize()
    step_us = start.elapsed_time(end) / 20 * 1e3
    bf = family_bytes_flops(cfg, Bp, ctx, distinct, splits)
    rows = [dict(family=f, us=t, bytes=bf.get(f, (0, 0))[0], flops=bf.get(f, (0, 0))[1]) for f, t in us.items()]
    rows.append(dict(family="launch and host gaps", us=max(step_us - sum(us.values()), 0.0), bytes=0, flops=0))
    for r in rows:
        r["gb_s"] = r["bytes"] / r["us"] / 1e3 if r["us"] else 0.0
        r["pct_peak"] = 100 * r["gb_s"] / (bw * 1e3)
    return dict(batch=B, padded_batch=Bp, context=ctx, graph_step_us=step_us, tok_s=B / step_us * 1e6, gemv_tb_s=bw,
                experts_per_layer=sum(distinct) / len(distinct), rows=sorted(rows, key=lambda r: -r["us"]),
                kernels=sorted(kernels, key=lambda r: -r["us"]))


def main():
    a, cfg, eng = dummy_engine(__doc__)
    bw, results = gemv_tb_s(), []
    for B in a.batch:
        r = dict(profile_batch(eng, cfg, B, a.context, bw), model=a.model, gpu=torch.cuda.get_device_name())
        results.append(r)
        print(f"== {a.model} batch {B} (graph {r['padded_batch']}), context {a.context}: graph replay "
              f"{r['graph_step_us']:.0f} us/step = {r['tok_s']:.0f} tok/s; {r['experts_per_layer']:.1f} experts/layer; "
              f"GEMV peak {bw:.2f} TB/s")
        print(f"{'kernel family':28s} {'us/step':>8s} {'share':>6s} {'MB':>8s} {'GB/s':>7s} {'% peak':>7s}")
        for row in r["rows"]:
            print(f"{row['family']:28s} {row['us']:8.1f} {100 * row['us'] / r['graph_step_us']:5.1f}% "
                  f"{row['bytes'] / 1e6:8.1f} {row['gb_s']:7.0f} {row['pct_peak']:6.0f}%")
        for k in r["kernels"][:12]:  # the single kernels behind the families
            print(f"  {k['us']:8.1f} us {k['calls']:5.0f} calls  {k['name'][:90]}")
    eng.stop()
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
