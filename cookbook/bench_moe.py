"""Tile sweep for the MXFP4 MoE GEMMs at gpt-oss shapes (benchmark, not a test): time per config, bytes of
the experts actually routed to, achieved GB/s. The winner is hard-coded in model/ops._moe_gemm.

    python cookbook/bench_moe.py --tokens 1 64
"""
import argparse
import itertools
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model import ops as K  # noqa: E402
from model.weights import pack_experts  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--tokens", nargs="+", type=int, default=[1, 64])
ap.add_argument("--experts", type=int, default=32)
a = ap.parse_args()
E, H, I, TOPK, dev = a.experts, 2880, 2880, 4, "cuda"
blocks1 = torch.randint(0, 256, (E, 2 * I, H // 32, 16), dtype=torch.uint8, device=dev)
blocks2 = torch.randint(0, 256, (E, H, I // 32, 16), dtype=torch.uint8, device=dev)
(w1, s1), (w2, s2) = [pack_experts(b, torch.randint(118, 123, b.shape[:3], dtype=torch.uint8, device=dev))
                      for b in (blocks1, blocks2)]
b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
configs = list(itertools.product([64, 128], [4, 8], [3, 4, 5]))
for T in a.tokens:
    x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
    logits = torch.randn(T, E, device=dev)
    block_m = 16 if T * TOPK <= 16 * E else 64
    table, order, rw = K.moe_route(logits, TOPK, block_m)
    used = int((table[0] >= 0).sum())
    experts = len(set(table[0].tolist()) - {-1})
    nbytes1 = experts * (w1[0].numel() * 4 + s1[0].numel())
    nbytes2 = experts * (w2[0].numel() * 4 + s2[0].numel())
    act = torch.empty(T * TOPK, I, device=dev, dtype=torch.bfloat16)
    out = torch.empty(T * TOPK, H, device=dev)
    res = []
    for cfg in configs:
        f1 = lambda: K._moe_gemm(x, w1, s1, b1, act, table, order, rw, TOPK, True, 7.0, block_m, 2 * I, tiles=cfg)
        f2 = lambda: K._moe_gemm(act, w2, s2, b2, out, table, order, rw, TOPK, False, 7.0, block_m, H, tiles=cfg)
        try:
            t1 = triton.testing.do_bench(f1, warmup=5, rep=30, return_mode="median")
            t2 = triton.testing.do_bench(f2, warmup=5, rep=30, return_mode="median")
        except Exception as e:  # a config that does not compile or fit
            print(f"T={T} {cfg}: {type(e).__name__}")
            continue
        res.append((t1 + t2, t1, t2, cfg))
    res.sort()
    print(f"== T={T} tokens, {experts} experts touched, {used} tiles; gate_up {nbytes1/1e6:.1f} MB, down {nbytes2/1e6:.1f} MB")
    for tot, t1, t2, cfg in res[:6] + res[-2:]:
        print(f"  (BN, warps, stages)={cfg}: gate_up {t1*1e3:7.1f} us {nbytes1/t1/1e6:6.0f} GB/s | "
              f"down {t2*1e3:7.1f} us {nbytes2/t2/1e6:6.0f} GB/s | both {tot*1e3:7.1f} us")
