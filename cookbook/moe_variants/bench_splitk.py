"""Device: model/ops.moe against moe_splitk.moe (gate_up split-K) at 20b / 120b shapes and small batch.
Not yet run (the 2026-11-29 session's device time was spent). python cookbook/moe_variants/bench_splitk.py"""
import sys
from pathlib import Path

import torch
import triton

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]
from model import ops  # noqa: E402
from model.weights import pack_experts  # noqa: E402
from moe_splitk import moe as moe_splitk  # noqa: E402

dev, H, I = "cuda", 2880, 2880
for E in [32, 128]:
    packed = [pack_experts(torch.randint(0, 256, (E, n, k // 32, 16), dtype=torch.uint8, device=dev),
                           torch.randint(118, 123, (E, n, k // 32), dtype=torch.uint8, device=dev))
              for n, k in [(2 * I, H), (H, I)]]
    (w1, s1), (w2, s2) = packed
    b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
    for T in [1, 2, 4, 8]:
        x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
        logits = torch.randn(T, E, device=dev)
        ref = ops.moe(x, logits, w1, s1, b1, w2, s2, b2, 4, 7.0).sum(1)
        base = triton.testing.do_bench(lambda: ops.moe(x, logits, w1, s1, b1, w2, s2, b2, 4, 7.0), rep=50,
                                       return_mode="median") * 1e3
        line = f"E {E:3d} T {T}: engine {base:6.1f} us"
        for S in [2, 3, 4, 6, 8]:
            y = moe_splitk(x, logits, w1, s1, b1, w2, s2, b2, 4, 7.0, S).sum(1)
            err = ((y - ref).norm() / ref.norm()).item()
            t = triton.testing.do_bench(lambda: moe_splitk(x, logits, w1, s1, b1, w2, s2, b2, 4, 7.0, S), rep=50,
                                        return_mode="median") * 1e3
            line += f" | S={S} {t:6.1f} us (err {err:.0e})"
        print(line, flush=True)
