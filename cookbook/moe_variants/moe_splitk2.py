"""Split-K for gate_up at small batch, second try (2026-11-30): the engine's own kernel, a separate SwiGLU.

Why: at 1 token the 20b gate_up is 4 experts x 45 programs = 180 programs of 4 warps, ~1.4 warps per SM
scheduler; its loop is ~260 dependent instructions per 64-feature step, so one step takes ~1,000 cycles
(~0.57 us, measured 25.8-28.1 us for 45 steps, 1.3 TB/s). More programs hide that latency.
The first try (moe_splitk.py) moved the SwiGLU into the down kernel's x load: its loop grew to 672
instructions per step and it ran 3-7x slower (bench_splitk.py, 2026-11-30). Here nothing in the kernels
changes: x is gathered into expert order, `kernels._moe_kernel` runs the gate_up as a plain projection
(GATE_UP=False: split-K rows pair * S + split, router weight 1, bias in split 0), and `_swiglu_kernel` sums
the S fp32 partials of each pair in a fixed order and writes the activations in expert order.
Prediction: gate_up 28 -> ~14 us per 20b layer at S = 4, plus ~2 us for the gather and ~2.5 us for the SwiGLU
launch: ~9 us per layer, 20b batch 1 ~430 -> ~470 tok/s. Measured (H200, 2026-11-30, bench_splitk.py): the whole
MoE at 1 token took 45.7-48.4 us per 20b layer at S = 2-6 against the engine's 43.7: not kept.
`TRITON_INTERPRET=1 python cookbook/moe_variants/moe_splitk2.py` checks it on the CPU; bench_splitk.py times it.
"""
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
    splits, tiles = ops.down_splits(T, table.shape[1], H, I, x.device)
    out = torch.empty((T * top_k * splits, H), device=x.device, dtype=torch.float32)
    ops._moe_gemm(act, w2, s2, b2, out, table, order, rw, top_k, False, limit, block_m, H, tiles, splits)
    return out.view(T, top_k * splits, H)


if __name__ == "__main__":  # CPU check against the float32 reference (set TRITON_INTERPRET=1)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from moe_splitk import CASES, cpu_check
    cpu_check(moe, CASES + [(8, 128, 96, 1, 1, torch.float32)])
