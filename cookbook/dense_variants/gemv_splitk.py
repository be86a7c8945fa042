"""Split-K skinny GEMM for the dense projections at decode, prepared 2026-11-30 (third session), not yet run on
a GPU: the next session's candidate for the O projection.

Why: cuBLAS runs the O projection (2880 x 4096 bf16, 23.6 MB) at 1 token as split-K plus a reduce kernel,
9.4 + 2.0 us = 2.1 TB/s, while the QKV projection (5120 x 2880, 29.5 MB) reaches 2.9 TB/s (10.7 us; profile at
206d408, cookbook/bench_small_ops.py). The engine already sums fp32 partial rows in add_rmsnorm (the MoE's
down projection hands it T x R rows), so a split-K projection can skip the reduce: each split writes its own
fp32 row, the bias goes into split 0, and add_rmsnorm(h, w, eps, partials) adds them in a fixed order.
Prediction: O at QKV's 2.9 TB/s is ~8.1 us, -3.3 us per layer, ~-80 us per 20b step at batch 1 (~+4%).
An earlier Triton skinny GEMM without split-K (2026-11-29) lost to cuBLAS (754 vs 650 us per step over QKV, O
and router): the split is the difference to test.

    TRITON_INTERPRET=1 python cookbook/dense_variants/gemv_splitk.py          # CPU check against torch
    python cookbook/dense_variants/gemv_splitk.py --bench                     # H200: against F.linear
"""
import argparse
import itertools
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import graph_us  # noqa: E402
from model import ops  # noqa: E402


@triton.jit
def _linear_splitk_kernel(x_ptr, w_ptr, b_ptr, out_ptr, T, N, K, stride_xt, stride_wn, stride_ot, stride_os,
                          BLOCK_T: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          SPLITS: tl.constexpr, PREC: tl.constexpr):
    # out[t, split, n] = sum over this split's K of W[n, k] x[t, k] (+ bias in split 0): acc[BN, BT] = W @ x^T,
    # so the weights stream as the MMA's M and the few tokens are its N
    pid_n, split = tl.program_id(0), tl.program_id(1)
    n, t = pid_n * BLOCK_N + tl.arange(0, BLOCK_N), tl.program_id(2) * BLOCK_T + tl.arange(0, BLOCK_T)
    per = tl.cdiv(tl.cdiv(K, BLOCK_K), SPLITS) * BLOCK_K  # whole K blocks per split
    acc = tl.zeros([BLOCK_N, BLOCK_T], tl.float32)
    for k0 in range(split * per, tl.minimum(K, split * per + per), BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + n[:, None] * stride_wn + k[None, :], mask=(n < N)[:, None] & (k < K)[None, :], other=0.0)
        x = tl.load(x_ptr + t[None, :] * stride_xt + k[:, None], mask=(t < T)[None, :] & (k < K)[:, None], other=0.0)
        acc = tl.dot(w, x, acc, input_precision=PREC)  # [BN, BT]
    acc += tl.where(split == 0, tl.load(b_ptr + n, mask=n < N, other=0.0).to(tl.float32), 0.0)[:, None]
    tl.store(out_ptr + t[None, :] * stride_ot + split * stride_os + n[:, None], acc,
             mask=(t < T)[None, :] & (n < N)[:, None])


def linear_splitk(x, w, b, splits, block_n=64, block_k=128, warps=4, stages=4):
    """x [T, K], w [N, K], b [N] -> [T, S, N] float32 partials (bias in split 0), for add_rmsnorm to sum."""
    (T, K), N = x.shape, w.shape[0]
    assert w.shape == (N, K) and b.shape == (N,) and x.stride(1) == 1 and w.stride(1) == 1
    out = torch.empty((T, splits, N), device=x.device, dtype=torch.float32)  # [T, S, N]
    block_t = 16 if T <= 16 else 64  # tl.dot's N >= 16
    grid = (triton.cdiv(N, block_n), splits, triton.cdiv(T, block_t))
    _linear_splitk_kernel[grid](x, w, b, out, T, N, K, x.stride(0), w.stride(0), out.stride(0), out.stride(1),
                                BLOCK_T=block_t, BLOCK_N=block_n, BLOCK_K=block_k, SPLITS=splits,
                                PREC="ieee" if x.dtype == torch.float32 else "tf32", num_warps=warps, num_stages=stages)
    return out


def check(device):
    """Against x @ w^T + b in float64, odd shapes; then through add_rmsnorm as the engine would use it."""
    torch.manual_seed(0)
    for T, N, K, S in [(1, 100, 300, 3), (5, 64, 256, 2), (17, 90, 130, 4), (3, 200, 64, 1)]:
        x, w, b = torch.randn(T, K, device=device), torch.randn(N, K, device=device), torch.randn(N, device=device)
        y = linear_splitk(x, w, b, S)
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
                    t = graph_us([lambda w=w: linear_splitk(x, w, b, splits, bn, bk, 4, stages) for w in ws])
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
