"""The tile sweep behind ops.linear (the split-K skinny linear, kernels._linear_kernel), against F.linear.

History: written 2026-11-30 (third session) as a variant with its own kernel; its first H200 run (fourth session,
docs/runs/gemv_splitk_3f8baf3.txt) put the O projection (2880 x 4096 bf16) at 7.84 us per call at 1 and 8 tokens
against cuBLAS's 11.08 (split-K + reduce), so the kernel moved into kernels.py (ebc224f) and the router uses it too.
Its partials are summed by add_rmsnorm, so no reduce launch. At 64 tokens it gains 0.9 us, which add_rmsnorm's
partial rows take back: the engine uses it up to 16 tokens. QKV gains 0.9 us at 1 token; since the ninth session
(cede380) RoPE sums its 4 partials, and QKV runs on it up to 16 tokens too (20b batch 1 +2.4% end to end).

    TRITON_INTERPRET=1 python cookbook/dense_variants/gemv_splitk.py          # CPU check against torch
    python cookbook/dense_variants/gemv_splitk.py --bench                     # H200: the sweep against F.linear
"""
import argparse
import itertools
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import graph_us  # noqa: E402
from model import ops  # noqa: E402


def check(device):
    """Against x @ w^T + b in float64, odd shapes; then through add_rmsnorm as the engine would use it."""
    torch.manual_seed(0)
    for T, N, K, S in [(1, 100, 300, 3), (5, 64, 256, 2), (17, 90, 130, 4), (3, 200, 64, 1)]:
        x, w, b = torch.randn(T, K, device=device), torch.randn(N, K, device=device), torch.randn(N, device=device)
        y = ops.linear_partials(x, w, b, S, 64, 128, stages=4)  # [T, S, N]
        ref = (x.double() @ w.double().T + b.double()).float()
        err = ((y.sum(1) - ref).norm() / ref.norm()).item()
        h = torch.randn(T, N, device=device)
        normed = ops.add_rmsnorm(h.clone(), torch.ones(N, device=device), 1e-5, y)
        want = ops.add_rmsnorm(h.clone(), torch.ones(N, device=device), 1e-5, ref)
        err2 = ((normed - want).norm() / want.norm()).item()
        print(f"T={T} N={N} K={K} S={S}: rel err {err:.2e}, through add_rmsnorm {err2:.2e}")
        assert err < 2e-5 and err2 < 2e-5


def bench(layers=24):
    """Per call in a CUDA graph of `layers` calls over distinct weights (none sit in L2), median of 5."""
    for name, N, K in [("O", 2880, 4096), ("QKV", 5120, 2880)]:
        ws = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) for _ in range(layers)]
        b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        for T in [1, 8, 64]:
            x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
            base = graph_us([lambda w=w: F.linear(x, w, b) for w in ws])
            res = []
            for splits, bn, bk, stages in itertools.product([1, 2, 4, 8], [32, 64, 128], [64, 128], [3, 4]):
                try:
                    t = graph_us([lambda w=w: ops.linear_partials(x, w, b, splits, bn, bk, stages=stages) for w in ws])
                except Exception as e:  # a config that does not fit
                    print(f"  {name} T={T} S={splits} BN={bn} BK={bk} st={stages}: {type(e).__name__}")
                    continue
                res.append((t, splits, bn, bk, stages))
            res.sort()
            print(f"{name} T={T}: F.linear {base:.2f} us ({N * K * 2 / base / 1e3:.0f} GB/s); best split-K "
                  + "; ".join(f"{t:.2f} us (S={s} BN={bn} BK={bk} st={st})" for t, s, bn, bk, st in res[:3]),
                  flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="store_true")
    if ap.parse_args().bench:
        bench()
    else:
        check("cuda" if torch.cuda.is_available() else "cpu")
