import torch
import triton
import triton.language as tl
from moe_d import _fp4x8, SLOTS

TILE_N, TILE_K = 64, 64  # load-time tile: 64 rows x 64 features = 2 KB of words + 128 B of scales, contiguous


def pack_experts(blocks, scales):
    """[E, N, K/32, 16] blocks + [E, N, K/32] scales -> tiled words [E, N/64, KT, 64, 8] int32 and scales
    [E, N/64, KT, 64, 2] uint8, KT = ceil(K / 64) (an odd last group is padded with zero codes)."""
    E, N, G, _ = blocks.shape
    pn, pg = -N % 64, G % 2  # zero codes pad rows to a whole tile and an odd last group (none for gpt-oss)
    blocks = torch.nn.functional.pad(blocks, (0, 0, 0, pg, 0, pn))
    scales = torch.nn.functional.pad(scales, (0, pg, 0, pn), value=127)
    N += pn
    nib = torch.stack([blocks & 15, blocks >> 4], -1).flatten(-2)  # [E, N, G, 32]
    words = torch.zeros(*blocks.shape[:-1], 4, dtype=torch.int32, device=blocks.device)
    c = torch.arange(4, device=blocks.device)
    for i, (m0, s0) in enumerate(SLOTS):
        for h in range(2):
            code = nib[..., 8 * i + 2 * c + h].to(torch.int32)
            words |= ((code & 7) << (m0 + 16 * h)) | ((code >> 3) << (s0 + 16 * h))
    KT = words.shape[2] // 2
    words = words.view(E, N // 64, 64, KT, 8).transpose(2, 3).contiguous()
    scales = scales.view(E, N // 64, 64, KT, 2).transpose(2, 3).contiguous()
    return words, scales


@triton.jit
def moe_g(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr,
          N, K, stride_xm, stride_we, stride_wn, stride_se, stride_sn, stride_be, stride_om, stride_tt,
          TOPK: tl.constexpr, GATE_UP: tl.constexpr, LIMIT: tl.constexpr, ALPHA: tl.constexpr,
          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUPS: tl.constexpr, DT: tl.constexpr,
          PREC: tl.constexpr):
    # stride_wn / stride_sn: one 64-row block of tiles; a 64 x 64 tile is 512 words / 128 scale bytes
    pid_t, pid_n = tl.program_id(0), tl.program_id(1)
    e = tl.load(table_ptr + pid_t)
    if e < 0:
        return
    rows = tl.load(table_ptr + stride_tt + pid_t) + tl.arange(0, BLOCK_M)
    rmask = rows < tl.load(table_ptr + 2 * stride_tt + pid_t)
    pair = tl.load(order_ptr + rows, mask=rmask, other=0).to(tl.int64)
    xrow = pair // TOPK if GATE_UP else rows.to(tl.int64)
    r = tl.arange(0, BLOCK_N)
    n = pid_n * BLOCK_N + r
    blk = (n // 64).to(tl.int64)  # rows are padded to whole tiles at load; the store masks
    w_ptrs = w_ptr + e.to(tl.int64) * stride_we + blk[:, None] * stride_wn + (r % 64)[:, None] * 8 + tl.arange(0, 8)[None, :]
    s_ptrs = s_ptr + e.to(tl.int64) * stride_se + blk[:, None] * stride_sn + (r % 64)[:, None] * 2 + tl.arange(0, 2)[None, :]
    k = tl.arange(0, 64)
    x_ptrs = x_ptr + xrow[None, :] * stride_xm + k[:, None]
    sc_next = tl.load(s_ptrs).to(tl.int16)
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    for kt in range(0, tl.cdiv(K, 64)):
        sc = ((sc_next - 98) << 10).to(tl.float16, bitcast=True)  # [BN, 2] 2^(s-127) * 2^14
        sc_next = tl.load(s_ptrs + (kt + 1) * 128, mask=kt + 1 < tl.cdiv(K, 64), other=127).to(tl.int16)
        w = tl.reshape(tl.load(w_ptrs + kt * 512), [BLOCK_N * 2, 4])
        wf = tl.reshape(_fp4x8(w), [BLOCK_N, 2, 32]) * sc[:, :, None]
        xt = tl.load(x_ptrs + kt * 64, mask=rmask[None, :] & (kt * 64 + k < K)[:, None], other=0.0).to(DT)
        acc = tl.dot(tl.reshape(wf, [BLOCK_N, 64]).to(DT), xt, acc, input_precision=PREC)
    acc += tl.load(bias_ptr + e * stride_be + tl.minimum(n, N - 1)).to(tl.float32)[:, None]
    acc = tl.trans(acc)  # [BM, BN]
    if GATE_UP:
        gate, up = tl.split(tl.reshape(acc, [BLOCK_M, BLOCK_N // 2, 2]))
        gate = tl.minimum(gate, LIMIT)
        up = tl.minimum(tl.maximum(up, -LIMIT), LIMIT)
        y = (up + 1.0) * gate * tl.sigmoid(ALPHA * gate)
        c = pid_n * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
        tl.store(out_ptr + rows[:, None].to(tl.int64) * stride_om + c[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=rmask[:, None] & (c < N // 2)[None, :])
    else:
        y = acc * tl.load(rw_ptr + pair, mask=rmask, other=0.0)[:, None]
        tl.store(out_ptr + pair[:, None] * stride_om + n[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=rmask[:, None] & (n < N)[None, :])
