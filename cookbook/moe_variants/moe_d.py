import torch
import triton
import triton.language as tl


@triton.jit
def _fp4x8(w):  # [R, 4] int32 words in the load-time layout (see repack) -> [R, 32] fp16 = E2M1 value * 2^-14
    M: tl.constexpr = 0x0E000E00  # fp16 bits 9-11 (low exponent bits, top mantissa bit) of both halves
    S: tl.constexpr = -0x7FFF8000  # fp16 sign bits (0x80008000 as int32)
    MS: tl.constexpr = -0x71FF7200  # M | S
    r0 = w & MS  # pair slot 0 is stored in place; slot 1 one byte down; slots 2, 3 split
    r1 = (w << 8) & MS
    r2 = ((w << 5) & M) | ((w << 15) & S)
    r3 = ((w >> 3) & M) | ((w << 7) & S)
    r = tl.join(tl.join(r0, r1), tl.join(r2, r3))  # [R, 4(c), 2(a), 2(b)] slot i = 2b + a
    r = tl.reshape(tl.permute(r, [0, 3, 2, 1]), [w.shape[0], 4, 4])  # [R, 4(i), 4(c)]
    h = tl.join((r & 0xFFFF).to(tl.int16), (r >> 16).to(tl.int16))  # [R, 4(i), 4(c), 2(h)]
    return tl.reshape(h, [w.shape[0], 32]).to(tl.float16, bitcast=True)  # feature 8i + 2c + h of the group

# bit positions (within each 16-bit half) of pair slot i: (mantissa/exponent 3 bits start, sign)
SLOTS = [(9, 15), (1, 7), (4, 0), (12, 8)]


def repack(blocks):
    """[..., G, 16] uint8 checkpoint blocks (byte j: feature 2j low nibble, 2j+1 high) -> [..., G * 4] int32."""
    nib = torch.stack([blocks & 15, blocks >> 4], -1).flatten(-2)  # [..., G, 32] E2M1 codes in feature order
    words = torch.zeros(*blocks.shape[:-1], 4, dtype=torch.int32, device=blocks.device)  # [..., G, 4(c)]
    c = torch.arange(4, device=blocks.device)
    for i, (m0, s0) in enumerate(SLOTS):
        for h in range(2):
            code = nib[..., 8 * i + 2 * c + h].to(torch.int32)  # [..., G, 4]
            words |= ((code & 7) << (m0 + 16 * h)) | ((code >> 3) << (s0 + 16 * h))
    return words.flatten(-2)


@triton.jit
def moe_d(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr,
          N, K, stride_xm, stride_we, stride_wn, stride_se, stride_sn, stride_be, stride_om, stride_tt,
          TOPK: tl.constexpr, GATE_UP: tl.constexpr, LIMIT: tl.constexpr, ALPHA: tl.constexpr,
          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUPS: tl.constexpr, DT: tl.constexpr,
          PREC: tl.constexpr):
    pid_t, pid_n = tl.program_id(0), tl.program_id(1)
    e = tl.load(table_ptr + pid_t)
    if e < 0:
        return
    rows = tl.load(table_ptr + stride_tt + pid_t) + tl.arange(0, BLOCK_M)
    rmask = rows < tl.load(table_ptr + 2 * stride_tt + pid_t)
    pair = tl.load(order_ptr + rows, mask=rmask, other=0).to(tl.int64)
    xrow = pair // TOPK if GATE_UP else rows.to(tl.int64)
    n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    nl = tl.minimum(n, N - 1)
    w_ptrs = w_ptr + e.to(tl.int64) * stride_we + nl[:, None].to(tl.int64) * stride_wn + tl.arange(0, 4)[None, :]
    s_ptrs = s_ptr + e.to(tl.int64) * stride_se + nl.to(tl.int64) * stride_sn
    x_ptrs = x_ptr + xrow[None, :] * stride_xm + tl.arange(0, 32)[:, None]
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    for g0 in range(0, K // 32, GROUPS):
        for j in tl.static_range(GROUPS):
            g = g0 + j
            wf = _fp4x8(tl.load(w_ptrs + g * 4))  # [BN, 32]
            xt = tl.load(x_ptrs + g * 32, mask=rmask[None, :], other=0.0).to(DT)  # [32, BM]
            part = tl.dot(wf.to(DT), xt, input_precision=PREC)
            sc = tl.load(s_ptrs + g).to(tl.int32)
            acc += part * ((sc + 14) << 23).to(tl.float32, bitcast=True)[:, None]
    acc += tl.load(bias_ptr + e * stride_be + nl).to(tl.float32)[:, None]
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
