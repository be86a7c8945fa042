"""Decode attention alone (benchmark, not a test): the engine's kernel at 20b shapes (64 query heads, 8 kv heads,
head dim 64) over a paged cache (full layers, 256-row pages) and 128-row rings (sliding layers), per call inside
a CUDA graph of 12 calls over distinct caches, sweeping the tile config (BLOCK_N, warps, stages) that
model/ops.attention fixes for decode at (128, 4, 2), or (64, 4, 2) for short KV splits. Prints us per call and GB/s
of K+V read.

    python cookbook/bench_attention.py --batch 1 64 --ctx 1000 --out attn.jsonl
    python cookbook/bench_attention.py --batch 1 --splits 2 4 8 16 32 --configs 64,4,4   # KV splits at batch 1
"""
import argparse
import json
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import graph_us  # noqa: E402
from model import ops  # noqa: E402

NH, NKV, D, PAGE, RING, L = 64, 8, 64, 256, 128, 12


def setup(B, ctx, sliding):
    """Caches of L layers, a shuffled block table, one new token per sequence at position ctx."""
    rows = RING * B if sliding else triton.cdiv(ctx + 1, PAGE) * PAGE * B + PAGE
    kc = [torch.randn(rows, NKV, D, device="cuda", dtype=torch.bfloat16) for _ in range(L)]
    vc = [torch.randn_like(k) for k in kc]
    if sliding:  # a ring: one page of 128 rows per slot, page stride 0
        table = torch.arange(B, device="cuda", dtype=torch.int32)[:, None].expand(B, 64)
    else:
        W = triton.cdiv(ctx + 1, PAGE)
        table = (torch.randperm(B * W, device="cuda").to(torch.int32) + 1).view(B, W)
    qkv = torch.randn(B, NH + 2 * NKV, D, device="cuda", dtype=torch.bfloat16)
    cu = torch.arange(B + 1, device="cuda", dtype=torch.int32)
    start = torch.full((B,), ctx, device="cuda", dtype=torch.int32)
    sinks = torch.randn(NH, device="cuda")
    return kc, vc, table, qkv, cu, start, sinks


def launcher(B, ctx, sliding, splits, tiles):
    """12 calls of ops.attention (the engine's decode launch, with `tiles` in place of its fixed config; the
    step's key is read from the cache, whose rows hold ctx + 1 keys)."""
    kc, vc, table, qkv, cu, start, sinks = setup(B, ctx, sliding)
    out = torch.empty(B, NH, D, device="cuda", dtype=torch.bfloat16)
    cnt = torch.zeros(B * NKV, device="cuda", dtype=torch.int32)  # the split counts, as the engine keeps them
    window, page = (RING, RING) if sliding else (0, PAGE)
    return [lambda k=k, v=v: ops.attention(qkv, k, v, table, cu, start, sinks, NH, NKV, window, page, 1, splits,
                                           out=out, tiles=tiles, appended=True, counters=cnt) for k, v in zip(kc, vc)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 64])
    ap.add_argument("--ctx", type=int, default=1000)
    ap.add_argument("--configs", nargs="+", default=["64,4,3", "64,4,2", "64,2,3", "64,8,3", "32,4,3",
                                                      "32,2,3", "128,4,3", "64,4,4", "32,4,4"])
    ap.add_argument("--splits", type=int, nargs="+", help="KV splits of the full layers (default: the engine's)")
    ap.add_argument("--out")
    a = ap.parse_args()
    for B in a.batch:
        # full layers at each --splits (default: the engine's, llm.LLM._splits), then the sliding ones (1 split)
        for sliding, splits in [(False, s) for s in a.splits or [max(1, min(16, 64 // B))]] + [(True, 1)]:
            keys = min(a.ctx, RING) if sliding else a.ctx
            for cfg in a.configs:
                bn, w, s = map(int, cfg.split(","))
                us = graph_us(launcher(B, a.ctx, sliding, splits, (bn, w, s)))
                gbs = B * keys * NKV * D * 2 * 2 / us / 1e3
                kind = "sliding" if sliding else "full"
                print(f"B {B:3d} {kind:7s} splits {splits:2d} BLOCK_N {bn:3d} warps {w} stages {s}: "
                      f"{us:7.2f} us, {gbs:6.0f} GB/s")
                if a.out:
                    with open(a.out, "a") as f:
                        f.write(json.dumps(dict(B=B, ctx=a.ctx, kind=kind, splits=splits, block_n=bn, warps=w,
                                                stages=s, us=us, gb_s=gbs)) + "\n")


if __name__ == "__main__":
    main()
