"""Split-K for gate_up at small batch, second try (2026-11-30): the engine's own kernel, a separate SwiGLU.

Why: at 1 token the 20b gate_up is 4 experts x 45 programs = 180 programs of 4 warps, ~1.4 warps per SM
scheduler; its loop is ~260 dependent instructions per 64-feature step, so one step takes ~1,000 cycles
(~0.57 us, measured 25.8-28.1 us for 45 steps, 1.3 TB/s). More programs hide that latency.
The first try (moe_splitk.py) moved the SwiGLU into the down kernel's x load: its loop grew to 672
instructions per step and it ran 3-7x slower (bench_splitk.py, 2026-11-30). Here nothing in the kernels
changes: x is gathered into expert order, `kernels._moe_kernel` runs the gate_up as a plain projection
(GATE_UP=False: split-K rows pair * S + split, router weight 1, bias in split 0), and `_swiglu_kernel` sums
the S fp32 partials of each pair in a fixed order and writes the activations in expert order.
Prediction (not measured): gate_up 28 -> ~14 us per 20b layer at S = 4, plus ~2 us for the gather and ~2.5 us
for the SwiGLU launch: ~9 us per layer, ~0.2 ms per step, 20b batch 1 ~430 -> ~470 tok/s.
`TRITON_INTERPRET=1 python cookbook/moe_variants/moe_splitk2.py` checks it on the CPU; bench_splitk.py times it.
"""
import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from model import ops  # noqa: E402


@triton.jit
def _swiglu_kernel(part_ptr, order_ptr, out_ptr, I, stride_pm, stride_om, LIMIT: tl.constexpr, ALPHA: tl.constexpr,
                   S: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # a row in expert order; its pair's partials are rows pair * S + s
    pair = tl.load(order_ptr + row).to(tl.int64)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    gate = tl.zeros([BLOCK], tl.float32)
    up = tl.zeros([BLOCK], tl.float32)
    for s in tl.static_range(S):  # fixed order: the same sum whatever the batch holds
        p = part_ptr + (pair * S + s) * stride_pm + 2 * j
        gate += tl.load(p, mask=j < I, other=0.0)
        up += tl.load(p + 1, mask=j < I, other=0.0)
    gate = tl.minimum(gate, LIMIT)
    up = tl.minimum(tl.maximum(up, -LIMIT), LIMIT)
    y = (up + 1.0) * gate * tl.sigmoid(ALPHA * gate)
    tl.store(out_ptr + row.to(tl.int64) * stride_om + j, y.to(out_ptr.dtype.element_ty), mask=j < I)


def moe(x, wr, br, w1, s1, b1, w2, s2, b2, top_k, limit, up_splits):
    """model/ops.moe with the gate_up split over K in up_splits parts; same inputs and output."""
    T, H = x.shape
    I = b1.shape[1] // 2
    block_m = 16 if T * top_k <= 16 * w1.shape[0] else 64
    table, order, rw = ops.moe_route(x, wr, br, top_k, block_m)
    xg = x[order.long() // top_k]  # [A, H] tokens in expert order
    ones = torch.ones_like(rw)
    pre = torch.empty((T * top_k * up_splits, 2 * I), device=x.device, dtype=torch.float32)  # [A * S, 2I] pair order
    ops._moe_gemm(xg, w1, s1, b1, pre, table, order, ones, top_k, False, limit, block_m, 2 * I, splits=up_splits)
    act = torch.empty((T * top_k, I), device=x.device, dtype=x.dtype)  # [A, I] in expert order
    _swiglu_kernel[(T * top_k, triton.cdiv(I, 1024))](pre, order, act, I, pre.stride(0), act.stride(0), LIMIT=limit,
                                                      ALPHA=1.702, S=up_splits, BLOCK=1024)
    splits = ops.down_splits(table.shape[1], H, x.device)
    out = torch.empty((T * top_k * splits, H), device=x.device, dtype=torch.float32)
    ops._moe_gemm(act, w2, s2, b2, out, table, order, rw, top_k, False, limit, block_m, H, splits=splits)
    return out.view(T, top_k * splits, H)


if __name__ == "__main__":  # CPU check against the float32 reference (set TRITON_INTERPRET=1)
    assert os.environ.get("TRITON_INTERPRET") == "1" or torch.cuda.is_available()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    import conftest  # noqa: F401  (the interpreter's bf16-dot shim)
    import reference as R
    from model.weights import pack_experts
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for E, H, I, T, S, dtype in [(8, 128, 96, 1, 2, torch.float32), (8, 128, 96, 3, 3, torch.float32),
                                 (8, 128, 160, 1, 4, torch.bfloat16), (8, 128, 96, 1, 1, torch.float32)]:
        u8 = dict(dtype=torch.uint8, device=dev)
        bl1, bl2 = torch.randint(0, 256, (E, 2 * I, H // 32, 16), **u8), torch.randint(0, 256, (E, H, I // 32, 16), **u8)
        sc1, sc2 = torch.randint(118, 123, (E, 2 * I, H // 32), **u8), torch.randint(118, 123, (E, H, I // 32), **u8)
        b1, b2 = 0.1 * torch.randn(E, 2 * I, device=dev), 0.1 * torch.randn(E, H, device=dev)
        x, rw, rb = torch.randn(T, H, device=dev), 0.1 * torch.randn(E, H, device=dev), 0.1 * torch.randn(E, device=dev)
        x, rw, rb = [v.to(dtype).float() for v in (x, rw, rb)]
        ref = R.moe(x, rw, rb, R.mxfp4_dequant(bl1, sc1), b1, R.mxfp4_dequant(bl2, sc2), b2, 4)
        (w1, s1), (w2, s2) = pack_experts(bl1, sc1), pack_experts(bl2, sc2)
        y = moe(x.to(dtype), rw.to(dtype), rb.to(dtype), w1, s1, b1, w2, s2, b2, 4, 7.0, S).sum(1)
        err = ((y - ref).norm() / ref.norm()).item()
        print(f"E {E} H {H} I {I} T {T} split {S} {dtype}: rel err {err:.2e}")
        assert err < (1e-5 if dtype == torch.float32 else 2e-2), err
