"""Split-K for gate_up at small batch (2026-11-29). Measured on the H200 on 2026-11-30 (bench_splitk.py, CUDA
graphs): 3-7x slower than the engine, e.g. 134 us per 20b layer at 1 token and 2 splits against the engine's 46;
kept as the record of what lost. moe_splitk2.py is the second try.

At 1 token the 20b gate_up runs 4 experts x 45 programs of 45 steps each and reaches ~1.07 TB/s: latency-
bound. Splitting K needs the SwiGLU after the sum, so with SPLITS > 1 gate_up writes fp32 pre-activation
partials [A * S, 2I] (bias in split 0), and the down kernel (XSPLITS = S) sums them in order and applies the
SwiGLU as it loads x. Prediction: gate_up ~27 -> ~10 us per 20b layer at batch 1 with S = 4, ~0.4 ms per
step, 400 -> ~480 tok/s. Costs: one fp32 write + S reads of 2I values per pair (tiny at small batch); the
down kernel redoes the SwiGLU per 128-column program, and its loop grows from 262 to 672 instructions per
64-feature step with 4 splits (SASS, sm_90): the down projection may lose part of what gate_up gains.
The rest is model/ops' kernel; `python cookbook/moe_variants/moe_splitk.py` checks it on the CPU.
"""
import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from kernels import _fp4x8  # noqa: E402


@triton.jit
def moe_splitk(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr,
                N, K, stride_xm, stride_we, stride_wn, stride_se, stride_sn, stride_be, stride_om, stride_tt,
                TOPK: tl.constexpr, GATE_UP: tl.constexpr, LIMIT: tl.constexpr, ALPHA: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLITS: tl.constexpr, DT: tl.constexpr,
                PREC: tl.constexpr, XSPLITS: tl.constexpr):
    pid_t, pid_n, split = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    e = tl.load(table_ptr + pid_t)
    if e < 0:
        return
    rows = tl.load(table_ptr + stride_tt + pid_t) + tl.arange(0, BLOCK_M)
    rmask = rows < tl.load(table_ptr + 2 * stride_tt + pid_t)
    pair = tl.load(order_ptr + rows, mask=rmask, other=0).to(tl.int64)
    xrow = pair // TOPK if GATE_UP else rows.to(tl.int64)  # gate_up gathers tokens; down reads its rows
    r = tl.arange(0, BLOCK_N)
    n = pid_n * BLOCK_N + r
    tile = tl.minimum(n // 64, tl.cdiv(N, 64) - 1).to(tl.int64)[:, None]  # rows past N re-read the last tile
    w_ptrs = w_ptr + e.to(tl.int64) * stride_we + tile * stride_wn + (r % 64)[:, None] * 8 + tl.arange(0, 8)[None, :]
    s_ptrs = s_ptr + e.to(tl.int64) * stride_se + tile * stride_sn + (r % 64)[:, None] * 2 + tl.arange(0, 2)[None, :]
    k = tl.arange(0, 64)
    x_ptrs = x_ptr + xrow[None, :] * stride_xm + k[:, None]
    per = tl.cdiv(tl.cdiv(K, 64), SPLITS)  # split-K (down only): each split writes its own output row
    k0, k1 = split * per, tl.minimum(tl.cdiv(K, 64), split * per + per)
    # Triton pipelines no 1-byte loads, so the scales are prefetched one tile ahead by hand
    sc_next = tl.load(s_ptrs + k0 * 128, mask=k0 < k1, other=127).to(tl.int32)  # [BN, 2]
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    for kt in range(k0, k1):
        sc = ((sc_next + 14) << 23).to(tl.float32, bitcast=True).to(tl.float16)  # [BN, 2] 2^(s-B-127) * 2^14
        sc_next = tl.load(s_ptrs + (kt + 1) * 128, mask=kt + 1 < k1, other=127).to(tl.int32)
        wf = _fp4x8(tl.reshape(tl.load(w_ptrs + kt * 512), [BLOCK_N * 2, 4]))  # [BN * 2 groups, 32]
        wf = tl.reshape(tl.reshape(wf, [BLOCK_N, 2, 32]) * sc[:, :, None], [BLOCK_N, 64])  # exact: 1 bit x 2^k
        xm = rmask[None, :] & (kt * 64 + k < K)[:, None]
        if XSPLITS == 1:
            xt = tl.load(x_ptrs + kt * 64, mask=xm, other=0.0)  # [64, BM]
        else:  # x = SwiGLU of the gate_up partials [A * XSPLITS, 2K] (fp32, bias in split 0), summed in order
            g = tl.zeros([64, BLOCK_M], tl.float32)
            u = tl.zeros([64, BLOCK_M], tl.float32)
            for s in tl.static_range(XSPLITS):
                p = x_ptr + (xrow * XSPLITS + s)[None, :] * stride_xm + 2 * (kt * 64 + k)[:, None]
                g += tl.load(p, mask=xm, other=0.0)
                u += tl.load(p + 1, mask=xm, other=0.0)
            g = tl.minimum(g, LIMIT)
            u = tl.minimum(tl.maximum(u, -LIMIT), LIMIT)
            xt = (u + 1.0) * g * tl.sigmoid(ALPHA * g)
        acc = tl.dot(wf.to(DT), xt.to(DT), acc, input_precision=PREC)
    row_exp, _ = tl.split(tl.load(s_ptrs + tl.cdiv(K, 64) * 128).to(tl.int32))  # tile KT: the row's B + 127
    bias = tl.where(split == 0, tl.load(bias_ptr + e * stride_be + tl.minimum(n, N - 1)), 0.0)
    acc = tl.trans(acc * (row_exp << 23).to(tl.float32, bitcast=True)[:, None] + bias[:, None])  # [BM, BN]
    if GATE_UP and SPLITS > 1:  # pre-activation partials; the down kernel sums them and applies SwiGLU
        tl.store(out_ptr + (rows * SPLITS + split)[:, None].to(tl.int64) * stride_om + n[None, :], acc,
                 mask=rmask[:, None] & (n < N)[None, :])
    elif GATE_UP:  # rows 2j / 2j+1 are gate / up of unit j
        gate, up = tl.split(tl.reshape(acc, [BLOCK_M, BLOCK_N // 2, 2]))
        gate = tl.minimum(gate, LIMIT)
        up = tl.minimum(tl.maximum(up, -LIMIT), LIMIT)
        y = (up + 1.0) * gate * tl.sigmoid(ALPHA * gate)
        c = pid_n * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
        tl.store(out_ptr + rows[:, None].to(tl.int64) * stride_om + c[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=rmask[:, None] & (c < N // 2)[None, :])
    else:  # weight by the router, scatter to the pair's own row(s): out.view(T, TOPK * SPLITS, H)
        y = acc * tl.load(rw_ptr + pair, mask=rmask, other=0.0)[:, None]
        tl.store(out_ptr + (pair * SPLITS + split)[:, None] * stride_om + n[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=rmask[:, None] & (n < N)[None, :])


def moe(x, wr, br, w1, s1, b1, w2, s2, b2, top_k, limit, up_splits):
    """model/ops.moe with the gate_up split; tile config as the engine's."""
    from model import ops
    T, H = x.shape
    I = b1.shape[1] // 2
    block_m = 16 if T * top_k <= 16 * w1.shape[0] else 64
    table, order, rw = ops.moe_route(x, wr, br, top_k, block_m)
    splits = ops.down_splits(T, table.shape[1], H, I, x.device)[0]
    pre = torch.empty((T * top_k * up_splits, 2 * I), device=x.device, dtype=torch.float32)  # [A * S, 2I]
    out = torch.empty((T * top_k * splits, H), device=x.device, dtype=torch.float32)
    dt, prec = (tl.float32, "ieee") if x.dtype == torch.float32 else (tl.float16, "tf32")
    for (inp, w, s, b, o, n, gate_up, sp, xs) in [(x, w1, s1, b1, pre, 2 * I, True, up_splits, 1),
                                                 (pre, w2, s2, b2, out, H, False, splits, up_splits)]:
        moe_splitk[(table.shape[1], triton.cdiv(n, 128), sp)](
            inp, w, s, b, o, table, order, rw, n, I if not gate_up else H, inp.stride(0), w.stride(0), w.stride(1),
            s.stride(0), s.stride(1), b.stride(0), o.stride(0), table.stride(0), TOPK=top_k, GATE_UP=gate_up,
            LIMIT=limit, ALPHA=1.702, BLOCK_M=block_m, BLOCK_N=128, SPLITS=sp, DT=dt, PREC=prec, XSPLITS=xs,
            num_warps=4, num_stages=3)
    return out.view(T, top_k * splits, H)


CASES = [(8, 128, 96, 1, 2, torch.float32), (8, 192, 96, 3, 3, torch.float32), (8, 256, 160, 1, 4, torch.bfloat16)]


def cpu_check(moe_fn, cases=CASES):
    """moe_fn(x, wr, br, w1, s1, b1, w2, s2, b2, top_k, limit, up_splits) against the float32 reference, for
    cases of (E, H, I, T, up_splits, dtype); asserts each. Set TRITON_INTERPRET=1 on a machine without a GPU."""
    assert os.environ.get("TRITON_INTERPRET") == "1" or torch.cuda.is_available()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    import conftest  # noqa: F401  (the interpreter's bf16-dot shim)
    import reference as R
    from model.weights import pack_experts
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for E, H, I, T, S, dtype in cases:
        u8 = dict(dtype=torch.uint8, device=dev)
        bl1, bl2 = torch.randint(0, 256, (E, 2 * I, H // 32, 16), **u8), torch.randint(0, 256, (E, H, I // 32, 16), **u8)
        sc1, sc2 = torch.randint(118, 123, (E, 2 * I, H // 32), **u8), torch.randint(118, 123, (E, H, I // 32), **u8)
        b1, b2 = 0.1 * torch.randn(E, 2 * I, device=dev), 0.1 * torch.randn(E, H, device=dev)
        x, rw, rb = torch.randn(T, H, device=dev), 0.1 * torch.randn(E, H, device=dev), 0.1 * torch.randn(E, device=dev)
        x, rw, rb = [v.to(dtype).float() for v in (x, rw, rb)]
        ref = R.moe(x, rw, rb, R.mxfp4_dequant(bl1, sc1), b1, R.mxfp4_dequant(bl2, sc2), b2, 4)
        (w1, s1), (w2, s2) = pack_experts(bl1, sc1), pack_experts(bl2, sc2)
        y = moe_fn(x.to(dtype), rw.to(dtype), rb.to(dtype), w1, s1, b1, w2, s2, b2, 4, 7.0, S).sum(1)
        err = ((y - ref).norm() / ref.norm()).item()
        print(f"E {E} H {H} I {I} T {T} split {S} {dtype}: rel err {err:.2e}")
        assert err < (1e-5 if dtype == torch.float32 else 2e-2), err


if __name__ == "__main__":
    cpu_check(moe)
