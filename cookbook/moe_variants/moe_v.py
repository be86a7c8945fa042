import triton
import triton.language as tl

from moe_d import _fp4x8, repack  # noqa: F401  (repack: the layout these variants read)


@triton.jit
def moe_d2(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr,
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
    s_ptrs = s_ptr + e.to(tl.int64) * stride_se + nl[:, None].to(tl.int64) * stride_sn + tl.arange(0, GROUPS)[None, :]
    sc_next = tl.load(s_ptrs).to(tl.int32)
    x_ptrs = x_ptr + xrow[None, :] * stride_xm + tl.arange(0, 32)[:, None]
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    for g0 in range(0, K // 32, GROUPS):
        scs = ((sc_next + 14) << 23).to(tl.float32, bitcast=True)  # [BN, GROUPS]
        sc_next = tl.load(s_ptrs + g0 + GROUPS, mask=g0 + GROUPS < K // 32, other=0).to(tl.int32)
        for j in tl.static_range(GROUPS):
            g = g0 + j
            wf = _fp4x8(tl.load(w_ptrs + g * 4))  # [BN, 32]
            xt = tl.load(x_ptrs + g * 32, mask=rmask[None, :], other=0.0).to(DT)  # [32, BM]
            part = tl.dot(wf.to(DT), xt, input_precision=PREC)
            if GROUPS == 1:
                sj = tl.reshape(scs, [BLOCK_N])
            else:
                s0, s1 = tl.split(scs)
                sj = s0 if j == 0 else s1
            acc += part * sj[:, None]
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


@triton.jit
def moe_nos(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr,
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
            acc += part
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


@triton.jit
def moe_e(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr,
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
    w_ptrs = w_ptr + e.to(tl.int64) * stride_we + nl[:, None].to(tl.int64) * stride_wn + tl.arange(0, 4 * GROUPS)[None, :]
    s_ptrs = s_ptr + e.to(tl.int64) * stride_se + nl[:, None].to(tl.int64) * stride_sn + tl.arange(0, GROUPS)[None, :]
    x_ptrs = x_ptr + xrow[None, :] * stride_xm + tl.arange(0, 32 * GROUPS)[:, None]
    sc_next = tl.load(s_ptrs).to(tl.int16)
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    for g0 in range(0, K // 32, GROUPS):
        sc = ((sc_next - 98) << 10).to(tl.float16, bitcast=True)  # [BN, G] 2^(s-127) * 2^14 (s in [99, 142])
        sc_next = tl.load(s_ptrs + g0 + GROUPS, mask=g0 + GROUPS < K // 32, other=127).to(tl.int16)
        w = tl.reshape(tl.load(w_ptrs + g0 * 4), [BLOCK_N * GROUPS, 4])
        wf = tl.reshape(_fp4x8(w), [BLOCK_N, GROUPS, 32]) * sc[:, :, None]
        xt = tl.load(x_ptrs + g0 * 32, mask=rmask[None, :], other=0.0).to(DT)  # [32 G, BM]
        acc = tl.dot(tl.reshape(wf, [BLOCK_N, 32 * GROUPS]).to(DT), xt, acc, input_precision=PREC)
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


@triton.jit
def moe_f(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr,
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
    s_ptrs = s_ptr + e.to(tl.int64) * stride_se + nl[:, None].to(tl.int64) * stride_sn + tl.arange(0, GROUPS)[None, :]
    sc_next = tl.load(s_ptrs).to(tl.int16)
    x_ptrs = x_ptr + xrow[None, :] * stride_xm + tl.arange(0, 32)[:, None]
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    for g0 in range(0, K // 32, GROUPS):
        scs = ((sc_next - 98) << 10).to(tl.float16, bitcast=True)  # [BN, GROUPS] 2^(s-127) * 2^14
        sc_next = tl.load(s_ptrs + g0 + GROUPS, mask=g0 + GROUPS < K // 32, other=127).to(tl.int16)
        for j in tl.static_range(GROUPS):
            g = g0 + j
            xt = tl.load(x_ptrs + g * 32, mask=rmask[None, :], other=0.0).to(DT)  # [32, BM]
            if GROUPS == 1:
                sj = tl.reshape(scs, [BLOCK_N])
            else:
                s0, s1 = tl.split(scs)
                sj = s0 if j == 0 else s1
            wf = _fp4x8(tl.load(w_ptrs + g * 4)) * sj[:, None]  # [BN, 32]
            acc = tl.dot(wf.to(DT), xt, acc, input_precision=PREC)
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


