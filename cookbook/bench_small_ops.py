"""Micro-benchmarks for the small ops of a decode step (benchmark, not a test): add_rmsnorm at 4-32 warps,
the call forms of the dense projections (F.linear, W @ x^T, mv, addmv), lm_head with fp32 output from cuBLAS
against .float() after bf16, greedy sampling, and the sample kernel's strip width against torch.argmax. Each is
timed per call inside a CUDA graph of 24 calls over distinct buffers (so weights do not sit in L2), median of 5.

    python cookbook/bench_small_ops.py docs/runs/micro_small_ops.json
"""
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernels as K  # noqa: E402
from common import graph_us  # noqa: E402
from model import ops  # noqa: E402

DEV, H, L, V = "cuda", 2880, 24, 201088


def add_rmsnorm_warps(res):
    """T rows, R fp32 partial rows each (20 = 4 experts x 5 down splits at batch 1)."""
    for T, R in [(1, 1), (1, 20), (8, 1), (8, 4), (64, 1), (64, 4)]:
        hs = [torch.randn(T, H, device=DEV, dtype=torch.bfloat16) for _ in range(L)]
        ds, outs = [torch.randn(T, R, H, device=DEV) for _ in range(L)], [torch.empty_like(h) for h in hs]
        w = torch.randn(H, device=DEV, dtype=torch.bfloat16)
        row = [graph_us([lambda h=h, d=d, o=o: K._add_rmsnorm_kernel[(T,)](
            h, d, w, o, h.stride(0), d.stride(0), d.stride(1), o.stride(0), H, 1e-5, R=R,
            BLOCK_N=4096, num_warps=nw, launch_pdl=True) for h, d, o in zip(hs, ds, outs)]) for nw in [4, 8, 16, 32]]
        res[f"add_rmsnorm T={T} R={R}"] = row
        print(f"add_rmsnorm T={T:3d} R={R:2d}: warps 4/8/16/32 " + " ".join(f"{t:.2f}" for t in row) + " us")


def projections(res):
    """O [2880, 4096] and QKV [5120, 2880] in bf16: the call forms cuBLAS might run differently."""
    for name, N, Kd in [("O", 2880, 4096), ("QKV", 5120, 2880)]:
        Ws = [torch.randn(N, Kd, device=DEV, dtype=torch.bfloat16) for _ in range(L)]
        b = torch.randn(N, device=DEV, dtype=torch.bfloat16)
        for M in [1, 8, 64]:
            x = torch.randn(M, Kd, device=DEV, dtype=torch.bfloat16)
            forms = dict(linear_bias=lambda W: F.linear(x, W, b), linear=lambda W: F.linear(x, W),
                         w_xt=lambda W: torch.mm(W, x.t()))
            if M == 1:
                forms.update(mv=lambda W: torch.mv(W, x[0]), addmv=lambda W: torch.addmv(b, W, x[0]))
            t = {k: graph_us([lambda W=W, f=f: f(W) for W in Ws]) for k, f in forms.items()}
            res[f"{name} M={M}"] = t
            print(f"{name} M={M:2d}: " + " ".join(f"{k} {v:.2f}" for k, v in t.items())
                  + f" us; linear+bias {N * Kd * 2 / 1e3 / t['linear_bias']:.0f} GB/s")


def lm_head_and_sampling(res):
    Wl = torch.randn(V, H, device=DEV, dtype=torch.bfloat16)
    for M in [1, 64]:
        x, lg = torch.randn(M, H, device=DEV, dtype=torch.bfloat16), torch.randn(M, V, device=DEV)
        t_a = graph_us([lambda: F.linear(x, Wl).float()], reps=20)
        t_b = graph_us([lambda: torch.mm(x, Wl.t(), out_dtype=torch.float32)], reps=20)
        temp, seed = torch.zeros(M, device=DEV), torch.zeros(M, device=DEV, dtype=torch.int64)
        t_s = graph_us([lambda: ops.sample(lg, temp, seed, seed)], reps=20)
        res[f"lm_head M={M}"], res[f"sample M={M}"] = dict(float_after=t_a, out_dtype=t_b), t_s
        print(f"lm_head M={M:2d}: linear().float() {t_a:.1f} us, mm(out_dtype=fp32) {t_b:.1f} us; "
              f"greedy sample {t_s:.1f} us")


def greedy_strips(res):
    """The sample kernel's strip width and warps against torch.argmax, greedy, over 8 distinct logit buffers
    (llm.LLM._decode_body takes argmax for greedy graphs under 64 rows, where it wins)."""
    for B in (1, 8, 16, 32, 48, 64, 256):
        ls, out = [torch.randn(B, V, device=DEV) for _ in range(8)], torch.empty(B, device=DEV, dtype=torch.int64)
        z, floor = torch.zeros(B, device=DEV, dtype=torch.int64), torch.full((B,), float("-inf"), device=DEV)
        temp = torch.zeros(B, device=DEV)
        for bv, nw in ((4096, 4), (8192, 8), (16384, 16)):
            run = lambda lg, bv=bv, nw=nw: K._sample_kernel[(B,)](lg, out, temp, floor, z, z, V, lg.stride(0),
                                                                  BLOCK_V=bv, num_warps=nw)
            run(ls[0])
            assert torch.equal(out, ls[0].argmax(-1)), (B, bv, nw)
            res[f"sample B={B} BLOCK_V={bv} warps={nw}"] = graph_us([lambda lg=lg: run(lg) for lg in ls])
        res[f"argmax B={B}"] = graph_us([lambda lg=lg: torch.argmax(lg, -1) for lg in ls])
        row = " ".join(f"{k.split(' ', 2)[2]} {v:.2f}" for k, v in res.items() if k.startswith(f"sample B={B} "))
        print(f"greedy B={B:2d}: {row}; argmax {res[f'argmax B={B}']:.2f} us")


if __name__ == "__main__":
    res = {}
    add_rmsnorm_warps(res)
    projections(res)
    lm_head_and_sampling(res)
    greedy_strips(res)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(json.dumps(res, indent=1))
