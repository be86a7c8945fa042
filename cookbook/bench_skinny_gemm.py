"""Experiment (benchmark, not a test): a Triton skinny GEMM against cuBLAS for the dense projections of
gpt-oss-20b at decode (QKV, O, router; 24 layers in one CUDA graph), and add_rmsnorm with R partial rows by
num_warps. Run on the H200 on 2026-11-30 at c9b9bf8: cuBLAS won (docs/optimizations.md,
docs/runs/proto_linear_c9b9bf8.json). This prototype reduces its splits with a torch sum; the engine's later
split-K linear (kernels._linear_kernel, fourth session) lets add_rmsnorm sum them and beats cuBLAS for the O
projection up to 16 tokens (cookbook/dense_variants/gemv_splitk.py).

    python cookbook/bench_skinny_gemm.py                       # GPU
    TRITON_INTERPRET=1 python cookbook/bench_skinny_gemm.py    # CPU: correctness of the kernel only
"""
import json
import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernels as KK  # noqa: E402
from common import graph_us  # noqa: E402

CPU = os.environ.get("TRITON_INTERPRET") == "1"
dev = "cpu" if CPU else "cuda"


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, stride_xm, stride_wn, stride_om, stride_os,
                  HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  SPLITS: tl.constexpr):
    pid_n, pid_m, split = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    k = tl.arange(0, BLOCK_K)
    per = tl.cdiv(tl.cdiv(K, BLOCK_K), SPLITS) * BLOCK_K
    k0 = split * per
    k1 = tl.minimum(K, k0 + per)
    w_ptrs = w_ptr + tl.minimum(n, N - 1).to(tl.int64)[:, None] * stride_wn + k[None, :]
    x_ptrs = x_ptr + m[None, :] * stride_xm + k[:, None]
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    for kk in range(k0, k1, BLOCK_K):
        w = tl.load(w_ptrs + kk, mask=(kk + k < k1)[None, :], other=0.0)
        x = tl.load(x_ptrs + kk, mask=(m < M)[None, :] & (kk + k < k1)[:, None], other=0.0)
        acc = tl.dot(w, x, acc)
    if HAS_BIAS:
        acc += tl.where(split == 0, tl.load(b_ptr + tl.minimum(n, N - 1)).to(tl.float32), 0.0)[:, None]
    o = out_ptr + split * stride_os + m[None, :] * stride_om + n[:, None]
    tl.store(o, acc.to(out_ptr.dtype.element_ty), mask=(m < M)[None, :] & (n < N)[:, None])


def linear(x, w, b, cfg):
    bn, bk, warps, stages, splits = cfg
    M, K = x.shape
    N = w.shape[0]
    bm = max(16, min(64, triton.next_power_of_2(M)))
    out = torch.empty((splits, M, N), device=x.device, dtype=x.dtype if splits == 1 else torch.float32)
    grid = (triton.cdiv(N, bn), triton.cdiv(M, bm), splits)
    linear_kernel[grid](x, w, b if b is not None else w, out, M, N, K, x.stride(0), w.stride(0), out.stride(1),
                        out.stride(0), HAS_BIAS=b is not None, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SPLITS=splits,
                        num_warps=warps, num_stages=stages)
    return out[0] if splits == 1 else out.sum(0).to(x.dtype)


def graph_time(fn, reps=20):
    if CPU:
        fn()
        return 0.0
    return graph_us([fn], reps)


def main():
    L = 2 if CPU else 24
    H, NQKV, NO = (64, 160, 128) if CPU else (2880, 5120, 4096)
    dt = torch.float32 if CPU else torch.bfloat16
    wq = [torch.randn(NQKV, H, device=dev, dtype=dt) * 0.02 for _ in range(L)]
    bq = [torch.randn(NQKV, device=dev, dtype=dt) for _ in range(L)]
    wo = [torch.randn(H, NO, device=dev, dtype=dt) * 0.02 for _ in range(L)]
    bo = [torch.randn(H, device=dev, dtype=dt) for _ in range(L)]
    wr = [torch.randn(32, H, device=dev, dtype=dt) * 0.02 for _ in range(L)]
    br = [torch.randn(32, device=dev, dtype=dt) for _ in range(L)]
    nbytes = sum(t.numel() * t.element_size() for t in wq + wo + wr)
    configs = [(64, 128, 4, 4, 1), (64, 64, 4, 6, 1), (32, 128, 4, 4, 1), (32, 256, 4, 3, 1), (64, 128, 4, 4, 2),
               (128, 64, 4, 4, 1), (16, 256, 4, 4, 1), (64, 256, 8, 3, 1)]
    rows = []
    for M in ([1, 5] if CPU else [1, 8, 32, 64, 128]):
        x = torch.randn(M, H, device=dev, dtype=dt)
        xo = torch.randn(M, NO, device=dev, dtype=dt)
        out = {}

        def cublas():
            for l in range(L):
                out["q"] = torch.nn.functional.linear(x, wq[l], bq[l])
                out["o"] = torch.nn.functional.linear(xo, wo[l], bo[l])
                out["r"] = torch.nn.functional.linear(x, wr[l], br[l])
        t = graph_time(cublas)
        line = f"M {M:3d}: cuBLAS {t:7.1f} us {nbytes / max(t, 1e-9) / 1e6:5.2f} TB/s"
        rows.append(dict(M=M, cfg="cublas", us=t))
        for cfg in configs:
            try:
                for l in range(1):  # correctness
                    for a, w_, b_ in [(x, wq[l], bq[l]), (xo, wo[l], bo[l]), (x, wr[l], br[l])]:
                        ref = torch.nn.functional.linear(a.float(), w_.float(), b_.float())
                        err = ((linear(a, w_, b_, cfg).float() - ref).norm() / ref.norm()).item()
                        assert err < 1e-2, (cfg, M, err)

                def tri():
                    for l in range(L):
                        out["q"] = linear(x, wq[l], bq[l], cfg)
                        out["o"] = linear(xo, wo[l], bo[l], cfg)
                        out["r"] = linear(x, wr[l], br[l], cfg)
                t = graph_time(tri)
                line += f" | {cfg} {t:7.1f} ({nbytes / max(t, 1e-9) / 1e6:4.2f})"
                rows.append(dict(M=M, cfg=list(cfg), us=t))
            except Exception as e:  # noqa: BLE001
                line += f" | {cfg} FAIL {str(e)[:60]}"
        ok = CPU and "FAIL" not in line
        print(f"M {M}: every config matches F.linear (CPU: no timing)" if ok else line, flush=True)
    if CPU:
        return
    # add_rmsnorm with R partial rows at T=1 and T=64, by warps
    for T, R in ([(1, 3)] if CPU else [(1, 20), (1, 4), (64, 4), (8, 12)]):
        h = torch.randn(L, T, H, device=dev, dtype=dt)
        d = torch.randn(L, T, R, H, device=dev, dtype=torch.float32)
        wn = torch.ones(H, device=dev, dtype=dt)
        line = f"add_rmsnorm T {T} R {R}:"
        for warps in [4, 8, 16]:
            o = torch.empty(T, H, device=dev, dtype=dt)

            def run():
                for l in range(L):
                    KK._add_rmsnorm_kernel[(T,)](h[l], d[l], wn, o, h.stride(1), d.stride(1), d.stride(2), o.stride(0),
                                                 H, 1e-5, R=R, BLOCK_N=triton.next_power_of_2(H),
                                                 num_warps=warps)
            t = graph_time(run)
            line += f" warps {warps}: {t / L:6.2f} us"
            rows.append(dict(T=T, R=R, warps=warps, us=t / L))
        print(line, flush=True)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "proto_linear.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
