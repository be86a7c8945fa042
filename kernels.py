"""Every GPU kernel of the engine, in Triton; their launchers (checks, allocation, grid, fixed tiles) are in
model/ops.py. Imports only triton; each also runs on the CPU under TRITON_INTERPRET=1 (how CI tests them).
Shapes: T tokens in the step, B sequences, H hidden, D head dim, NH query heads, NKV kv heads, G = NH // NKV,
P cache rows (pages * PAGE), E experts, K in-features, N out-features, A = T * TOPK (token, expert) pairs, S splits."""
import triton
import triton.language as tl

INTERPRET = tl.constexpr(triton.knobs.runtime.interpret)


# Programmatic dependent launch (sm_90; launch_pdl=True): a kernel starts while the one before drains, waits here for
# its writes, then lets the next start (20b b1 432.6 -> 442.1 tok/s): loads above may read what 2+ launches back wrote.
@triton.jit
def _pdl(ON: tl.constexpr = True):
    if ON and not INTERPRET:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()


@triton.jit
def _count(cnt_ptr, n):  # a tail without a launch: of n programs counted after their stores, the last sees them all
    tl.debug_barrier()  # every thread's stores are issued before the count
    c = tl.atomic_add(cnt_ptr, 1, sem="acq_rel")
    tl.store(cnt_ptr, 0, mask=c == n - 1)  # the last (count n - 1) zeroes it for the next launch
    return c


# RMSNorm fused with the residual add: h += sum_r delta[:, r]; out = h * rsqrt(mean(h^2) + eps) * w
# One program per row; H = 2880 fits one block, so h is read once and written once (11.5 KB/row).
@triton.jit
def _add_rmsnorm_kernel(h_ptr, d_ptr, w_ptr, out_ptr, stride_ht, stride_dt, stride_dr, stride_ot, N, eps,
                        R: tl.constexpr, BLOCK_N: tl.constexpr):
    row, cols, mask = tl.program_id(0).to(tl.int64), tl.arange(0, BLOCK_N), tl.arange(0, BLOCK_N) < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)  # a weight: read before the wait, used (converted) only at the end
    _pdl()
    h = tl.load(h_ptr + row * stride_ht + cols, mask=mask, other=0.0).to(tl.float32)
    for r in tl.static_range(R):  # fixed order: the same sum whatever the batch holds. R = 0: h stored unchanged
        h += tl.load(d_ptr + row * stride_dt + r * stride_dr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(h_ptr + row * stride_ht + cols, h.to(h_ptr.dtype.element_ty), mask=mask)
    h = h.to(h_ptr.dtype.element_ty).to(tl.float32)  # normalize what the residual stream holds
    h = h * tl.rsqrt(tl.sum(h * h, axis=0) / N + eps) * w.to(tl.float32)
    tl.store(out_ptr + row * stride_ot + cols, h.to(out_ptr.dtype.element_ty), mask=mask)


# YaRN RoPE on q and k and/or the k, v append to a cache at row slot = slot_ptr[t, pos // PAGE] * PAGE + pos % PAGE
# (-1: none): decode passes page tables (a ring's: its slot at page stride 0), prefill rows at PAGE 1. A program per
# token and BLOCK_H head rows. src: qkv (in place, SPLITS = 1) or the QKV projection's S split-K partials, summed
# in a fixed order into a new qkv. cos_sin[pos] = [cos * c, sin * c], the YaRN concentration c folded in at load.
@triton.jit
def _rope_kv_kernel(src_ptr, qkv_ptr, pos_ptr, cs_ptr, kc_ptr, vc_ptr, slot_ptr, stride_st, stride_ss, stride_qt,
                    stride_cp, stride_cr, stride_sb, stride_sp, NH: tl.constexpr, NKV: tl.constexpr,
                    D: tl.constexpr, BLOCK_H: tl.constexpr, SPLITS: tl.constexpr, STORE: tl.constexpr,
                    ROTATE: tl.constexpr, WRITE: tl.constexpr, PAGE: tl.constexpr):  # t * 5120 < 2^31 under 400k
    t, hd, i = tl.program_id(0), tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)[:, None], tl.arange(0, D // 2)
    rows, qk, pos = hd < NH + 2 * NKV, hd < NH + NKV, tl.load(pos_ptr + t) if ROTATE else 0
    if ROTATE:  # positions, the tables and the rows are written before the step: read above the wait
        cos, sin = tl.load(cs_ptr + pos * stride_cp + i), tl.load(cs_ptr + pos * stride_cp + i + D // 2)  # [D/2]
    slot = tl.load(slot_ptr + t * stride_sb + pos // PAGE * stride_sp).to(tl.int64) * PAGE + pos % PAGE if WRITE else -1
    _pdl()
    src, x1, x2 = src_ptr + t * stride_st + hd * D + i, tl.zeros([BLOCK_H, D // 2], tl.float32), 0.0
    for s in tl.static_range(SPLITS):  # the bias came in split 0
        x1 += tl.load(src + s * stride_ss, mask=rows, other=0.0).to(tl.float32)
        x2 += tl.load(src + s * stride_ss + D // 2, mask=rows, other=0.0).to(tl.float32)
    x1, x2 = x1.to(qkv_ptr.dtype.element_ty).to(tl.float32), x2.to(qkv_ptr.dtype.element_ty).to(tl.float32)
    if ROTATE:  # v heads pass through
        x1, x2 = tl.where(qk, x1 * cos - x2 * sin, x1), tl.where(qk, x2 * cos + x1 * sin, x2)
    if STORE:
        tl.store(qkv_ptr + t * stride_qt + hd * D + i, x1.to(qkv_ptr.dtype.element_ty), mask=rows)
        tl.store(qkv_ptr + t * stride_qt + hd * D + i + D // 2, x2.to(qkv_ptr.dtype.element_ty), mask=rows)
    if WRITE:  # k and v from the registers above
        dst, wmask = tl.where(qk, kc_ptr, vc_ptr) + slot * stride_cr + ((hd - NH) % NKV) * D + i, (hd >= NH) & rows
        tl.store(dst, x1.to(kc_ptr.dtype.element_ty), mask=wmask & (slot >= 0))
        tl.store(dst + D // 2, x2.to(kc_ptr.dtype.element_ty), mask=wmask & (slot >= 0))


# Attention with sinks, sliding window and GQA, for prefill chunks and decode alike. One program = one sequence x
# BLOCK_T of its new tokens x one kv head x one KV split; its G query heads ride along as rows, so each K/V tile read
# serves BLOCK_T * G query rows. Cached keys come through the block table (a ring: one 128-row page per slot, page
# stride 0); a prefill chunk's own keys come from qkv, so a ring can be appended after attention without overwriting
# keys the chunk still needs; a decode token's key comes from the cache RoPE appended it to (APPENDED: one 64-key tile
# fewer per program, 20b b1 +1.0%, b64 +0.5%). The sink is the running max's start (m = sink, l = 1): no NaN, no clamp.
@triton.jit
def _attend(q, k, v, m, l, acc, qpos, j, valid, MASK: tl.constexpr, WINDOW: tl.constexpr, PREC: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision=PREC)  # [M, BLOCK_N], log2 units
    if MASK:  # 3 ops an element; tiles all queries see skip it (prefill after 118,784 keys: 31.6 -> 27.7 ms, H200)
        ok = valid[None, :] & (j[None, :] <= qpos[:, None]) & ((WINDOW == 0) | (j[None, :] > qpos[:, None] - WINDOW))
        s = tl.where(ok, s, float("-inf"))
    m_new = tl.maximum(m, tl.max(s, axis=1))
    p, alpha = tl.exp2(s - m_new[:, None]), tl.exp2(m - m_new)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
    return m_new, l * alpha + tl.sum(p, axis=1), acc


@triton.jit
def _attention_kernel(qkv_ptr, kc_ptr, vc_ptr, bt_ptr, cu_ptr, start_ptr, sink_ptr, out_ptr, part_ptr, ml_ptr, cnt_ptr,
                      stride_qt, stride_cr, stride_bb, stride_bp, stride_ps, stride_ot, sm_scale,
                      NH: tl.constexpr, NKV: tl.constexpr, D: tl.constexpr, G: tl.constexpr,
                      WINDOW: tl.constexpr, PAGE: tl.constexpr, SPLITS: tl.constexpr,
                      BLOCK_T: tl.constexpr, BLOCK_N: tl.constexpr, APPENDED: tl.constexpr, PREC: tl.constexpr):
    b, qb, kvh, split = tl.program_id(0), tl.program_id(1), tl.program_id(2) % NKV, tl.program_id(2) // NKV
    q0, q_len, start = tl.load(cu_ptr + b), tl.load(cu_ptr + b + 1) - tl.load(cu_ptr + b), tl.load(start_ptr + b)
    if qb * BLOCK_T >= q_len:
        return
    r = tl.arange(0, BLOCK_T * G)
    t, hq = qb * BLOCK_T + r // G, kvh * G + r % G  # token within the chunk, query head
    row_ok, qpos, qs = t < q_len, start + t, start + qb * BLOCK_T  # start: tokens cached before the chunk
    d, tok = tl.arange(0, D)[None, :], (q0 + t).to(tl.int64)[:, None]
    sink = tl.load(sink_ptr + hq).to(tl.float32) * 1.4426950408889634
    _pdl()  # the sequence's offsets, cached length and the sinks above were written before this layer
    q = tl.load(qkv_ptr + tok * stride_qt + hq[:, None] * D + d, mask=row_ok[:, None], other=0.0)
    q = (q.to(tl.float32) * (sm_scale * 1.4426950408889634)).to(q.dtype)  # [M, D]
    m, l, acc = sink, tl.full([BLOCK_T * G], 1.0, tl.float32), tl.zeros([BLOCK_T * G, D], tl.float32)
    hi = start + tl.minimum(q_len, (qb + 1) * BLOCK_T)  # one past the last query position
    lo = tl.maximum(qs - WINDOW + 1, 0) if WINDOW > 0 else 0
    per = tl.cdiv(tl.cdiv(hi - lo, SPLITS), BLOCK_N) * BLOCK_N  # keys per split, whole blocks
    lo, hi, n = lo + split * per, tl.minimum(hi, lo + split * per + per), tl.arange(0, BLOCK_N)
    cend = hi if APPENDED else tl.minimum(start, hi)  # keys [lo, cend) come from the cache, [cend, hi) from qkv
    for e in tl.static_range(1 if APPENDED else 0, 4, 2 if APPENDED else 1):  # per source: tiles all see, then the rest
        a, z = (lo, cend) if e < 2 else (tl.maximum(lo, cend), hi)
        mid = a if WINDOW or APPENDED else a + tl.maximum(tl.minimum(z, qs + 1) - a, 0) // BLOCK_N * BLOCK_N
        kp, vp = (kc_ptr, vc_ptr) if e < 2 else (qkv_ptr + NH * D, qkv_ptr + (NH + NKV) * D)
        for j0 in range(a if e % 2 == 0 else mid, mid if e % 2 == 0 else z, BLOCK_N):
            j, jm = j0 + n, j0 + n < z
            row = (q0 + j - start).to(tl.int64)[:, None] * stride_qt + kvh * D + d  # in qkv
            if e < 2:  # in the cache, through the block table
                page = tl.load(bt_ptr + b * stride_bb + (j // PAGE) * stride_bp, mask=jm, other=0).to(tl.int64)
                row = (page * PAGE + j % PAGE)[:, None] * stride_cr + kvh * D + d
            k, v = tl.load(kp + row, mask=jm[:, None], other=0.0), tl.load(vp + row, mask=jm[:, None], other=0.0)
            m, l, acc = _attend(q, k, v, m, l, acc, qpos, j, jm, e % 2 == 1, WINDOW, PREC)
    o = tok * stride_ot + hq[:, None] * D + d  # [M, D]: the rows in out and in each split's partials
    if SPLITS > 1:  # fp32 unnormalized partials and (m, l); the last split to finish combines them (no launch)
        ml, sm = ml_ptr + ((q0 + t).to(tl.int64) * NH + hq)[:, None] * 2 + tl.arange(0, 2)[None, :], stride_ps // D * 2
        tl.store(part_ptr + split * stride_ps + o, acc, mask=row_ok[:, None])
        tl.store(ml + split * sm, tl.join(m, l), mask=row_ok[:, None])  # [M, 2]
        if _count(cnt_ptr + (b * tl.num_programs(1) + qb) * NKV + kvh, SPLITS) < SPLITS - 1:
            return
        mx, l, acc = sink, tl.full([BLOCK_T * G], 1 - SPLITS, tl.float32), tl.zeros([BLOCK_T * G, D], tl.float32)
        for i in tl.static_range(SPLITS):  # online from mx = sink: l starts at 1 - S, as each split's l holds the sink
            m_i, l_i = tl.split(tl.load(ml + i * sm, mask=row_ok[:, None], other=0.0, cache_modifier=".cg"))
            a, w = tl.exp2(tl.minimum(mx - m_i, 0.0)), tl.exp2(tl.minimum(m_i - mx, 0.0))  # both to max(mx, m_i)
            part = tl.load(part_ptr + i * stride_ps + o, mask=row_ok[:, None], other=0.0, cache_modifier=".cg")
            mx, l, acc = tl.maximum(mx, m_i), l * a + l_i * w, acc * a[:, None] + part * w[:, None]
    tl.store(out_ptr + o, (acc / l[:, None]).to(out_ptr.dtype.element_ty), mask=row_ok[:, None])


# Skinny linear split over K: out[t, s, n] = sum over split s's K of W[n, k] x[t, k], + bias[n] in split 0.
# acc [BLOCK_N, BLOCK_T] = W @ x^T, so the weights stream as the MMA's M and the few tokens are its N. The
# S partials are summed in fp32 by their consumer in a fixed order (add_rmsnorm, RoPE, top-k): no reduce launch.
@triton.jit(do_not_specialize_on_alignment=["T"])  # not a compile per T % 16 (the same K loop: s47, offline SASS)
def _linear_kernel(x_ptr, w_ptr, b_ptr, out_ptr, T, N, K, stride_xt, stride_wn, stride_ot, stride_os,
                   BLOCK_T: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLITS: tl.constexpr,
                   PREC: tl.constexpr, PRE_K: tl.constexpr):
    n, split = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N), tl.program_id(1)
    t, per = tl.program_id(2) * BLOCK_T + tl.arange(0, BLOCK_T), tl.cdiv(tl.cdiv(K, BLOCK_K), SPLITS) * BLOCK_K
    lo, hi, kp = split * per, tl.minimum(K, split * per + per), split * per + tl.arange(0, PRE_K)  # whole K blocks
    bias = tl.load(b_ptr + n, mask=(n < N) & (split == 0), other=0.0)  # split 0 adds it; read before the wait
    # and the first PRE_K in-features' weights (that step peeled off the loop): they stream while the kernel before runs
    w0 = tl.load(w_ptr + n[:, None] * stride_wn + kp[None, :], mask=(n < N)[:, None] & (kp < hi)[None, :], other=0.0)
    _pdl()
    x0 = tl.load(x_ptr + t[None, :] * stride_xt + kp[:, None], mask=(t < T)[None, :] & (kp < hi)[:, None], other=0.0)
    acc = tl.dot(w0, x0, tl.zeros([BLOCK_N, BLOCK_T], tl.float32), input_precision=PREC)  # [BLOCK_N, BLOCK_T]
    for k0 in range(lo + PRE_K, hi, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + n[:, None] * stride_wn + k[None, :], mask=(n < N)[:, None] & (k < K)[None, :], other=0.0)
        x = tl.load(x_ptr + t[None, :] * stride_xt + k[:, None], mask=(t < T)[None, :] & (k < K)[:, None], other=0.0)
        acc = tl.dot(w, x, acc, input_precision=PREC)
    tl.store(out_ptr + t[None, :] * stride_ot + split * stride_os + n[:, None], acc + bias.to(tl.float32)[:, None],
             mask=(t < T)[None, :] & (n < N)[:, None])


# MXFP4 MoE. Routing: the router GEMV (_linear_kernel), top-k of its logits and softmax over those k (one token, 32
# experts: in _moe_kernel); the pairs grouped by expert in tiles of BLOCK_M rows. Fixed-length tables: graph-safe.
@triton.jit
def _topk(part_ptr, t, E, S, TOPK: tl.constexpr, KP: tl.constexpr, EP: tl.constexpr, SP: tl.constexpr):
    e, kk, s = tl.arange(0, EP), tl.arange(0, KP), tl.arange(0, SP)[:, None]
    part = tl.load(part_ptr + (t * S + s) * EP + e[None, :], mask=(s < S) & (e < E)[None, :], other=0.0)  # [SP, EP]
    lg = tl.where(e < E, tl.sum(part, axis=0), float("-inf"))  # fp32 logits (bias in split 0): one fixed-order sum
    ids, vals = tl.zeros([KP], tl.int32), tl.full([KP], float("-inf"), tl.float32)
    for k in tl.static_range(TOPK):  # k-th largest; ties go to the lower expert id
        m, idx = tl.max(lg, axis=0), tl.min(tl.where(lg == tl.max(lg, axis=0), e, EP), axis=0)
        ids, vals = tl.where(kk == k, idx, ids), tl.where(kk == k, m, vals)
        lg = tl.where(e == idx, float("-inf"), lg)
    p = tl.exp(vals - tl.max(vals, axis=0))  # softmax over the k chosen logits only
    return ids, p / tl.sum(p, axis=0)


@triton.jit
def _topk_kernel(part_ptr, ids_ptr, w_ptr, E, S, TOPK: tl.constexpr, KP: tl.constexpr, EP: tl.constexpr,
                 SP: tl.constexpr):  # one program per token
    _pdl()
    t, kk = tl.program_id(0).to(tl.int64), tl.arange(0, KP)
    ids, p = _topk(part_ptr, t, E, S, TOPK, KP, EP, SP)
    tl.store(ids_ptr + t * TOPK + kk, ids, mask=kk < TOPK)
    tl.store(w_ptr + t * TOPK + kk, p, mask=kk < TOPK)


# Program c places pairs and writes table entries [c, c + BLOCK): it counts all pairs per expert (histograms), sorts
# its pairs by (expert, pair), and the one at sorted position j goes to row start[e] + (e's pairs in earlier blocks)
# + j - (e's first position here). One program scanning pair by pair took 32 us per 120b layer at batch 64.
@triton.jit(do_not_specialize_on_alignment=["A"])  # no compile per A % 16 (s47); the table is padded to 16 (ops, s50)
def _tiles_kernel(ids_ptr, order_ptr, table_ptr, A, n_tiles, EP: tl.constexpr,  # n_tiles: the [3, n_tiles] table's
                  BLOCK_M: tl.constexpr, BLOCK: tl.constexpr):  # padded row length, so also its row stride
    _pdl()
    c, j, i = tl.program_id(0) * BLOCK, tl.arange(0, BLOCK), tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    counts, before, hm = tl.zeros([EP], tl.int32), tl.zeros([EP], tl.int32), tl.zeros([EP], tl.int32)
    for q0 in range(0, A, BLOCK):  # hm: this block's own histogram
        h = tl.histogram(tl.load(ids_ptr + q0 + j, mask=q0 + j < A, other=0), EP, mask=q0 + j < A)  # [EP]
        counts, before, hm = counts + h, before + tl.where(q0 < c, h, 0), hm + tl.where(q0 == c, h, 0)
    tiles = (counts + BLOCK_M - 1) // BLOCK_M
    tile_end, start = tl.cumsum(tiles, axis=0), tl.cumsum(counts, axis=0) - counts
    mine = tl.load(ids_ptr + i, mask=i < A, other=EP)  # [B]
    key = tl.sort(mine * BLOCK + j)  # by expert, then pair: the pair order within an expert is kept
    row = tl.gather(start + before - tl.cumsum(hm, axis=0) + hm, tl.minimum(key // BLOCK, EP - 1), 0) + j
    tl.store(order_ptr + row, c + key % BLOCK, mask=key < EP * BLOCK)
    ex = tl.cumsum(tl.histogram(tl.maximum(tile_end - c, 0), BLOCK, mask=tile_end < c + BLOCK), axis=0)
    exc = tl.minimum(ex, EP - 1)  # table entry i: expert ex = #experts with tile_end <= i (-1: none), rows
    row0 = tl.gather(start, exc, 0) + (i - tl.gather(tile_end - tiles, exc, 0)) * BLOCK_M
    tl.store(table_ptr + i, tl.where(i < tl.sum(tiles, axis=0), ex, -1), mask=i < n_tiles)
    tl.store(table_ptr + n_tiles + i, row0, mask=i < n_tiles)
    tl.store(table_ptr + 2 * n_tiles + i, tl.gather(start + counts, exc, 0), mask=i < n_tiles)


@triton.jit
def _fp4x8(w):  # [R, 4] int32 words, 8 E2M1 codes each (layout: model/weights.pack_experts) -> [R, 32] fp16
    K: tl.constexpr = 0x0E000E00 | -0x7FFF8000  # fp16 bits 9-11 (2 exponent bits, the mantissa bit) and 15, both halves
    r0 = w & K  # pair slot 0 is stored in place, slot 1 three bits down (subnormal fp16 = E2M1 value * 2^-14)
    r1 = (w << 3) & K  # slots 2 and 3: their 8 bits masked, then one multiply adds two shifted copies (2^6 + 2^2:
    r2 = ((w & 0x20382038) * 68) & K  # the 3 magnitude bits up 6, the sign up 2) whose bits never meet: no carries
    r3 = ((w & 0x40074007) * 514) & K  # 2^9 + 2^1. 9 ops per 8 codes; shifts and selects took 11
    r = tl.join(tl.join(r0, r1), tl.join(r2, r3))  # [R, 4 word, 2, 2]: slot 2b + a at [.., a, b]
    r = tl.reshape(tl.permute(r, [0, 3, 2, 1]), [w.shape[0], 4, 4])  # [R, 4 slot, 4 word]
    h = tl.join((r & 0xFFFF).to(tl.int16), (r >> 16).to(tl.int16))  # [R, 4 slot, 4 word, 2 half]
    return tl.reshape(h, [w.shape[0], 32]).to(tl.float16, bitcast=True)  # feature 8 slot + 2 word + half


# Grouped MXFP4 GEMM, swapped: acc[BN, BM] = W[BN, K] @ x[BM, K]^T, so the 4-bit weights are the register
# operand (decoded in place, no shared-memory round trip) and the few tokens of a tile are the MMA's N.
# Weights come in 64 x 64 tiles that are contiguous 2 KB (+128 B of scales): each step streams whole tiles.
@triton.jit
def _moe_kernel(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, table_ptr, order_ptr, rw_ptr, part_ptr, cnt_ptr,
                N, K, stride_xm, stride_we, stride_wn, stride_se, stride_sn, stride_be, stride_om, stride_tt, E,
                ROUTE: tl.constexpr, KP: tl.constexpr, EP: tl.constexpr, SP: tl.constexpr, TOPK: tl.constexpr,
                GATE_UP: tl.constexpr, LIMIT: tl.constexpr, ALPHA: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, SPLITS: tl.constexpr, PREC: tl.constexpr):
    _pdl(GATE_UP)  # the down's inputs but x (table, order, router weights) are two launches old: it waits at its loop
    pid_t, pid_n, split = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    if ROUTE:  # one token: pair k is the router's k-th expert, picked here from its partials (table_ptr, S splits)
        ids, p = _topk(table_ptr, 0, E, stride_tt, TOPK, KP, EP, SP) if SP else (  # or _topk_kernel's (SP = 0)
            tl.load(order_ptr + tl.arange(0, KP) % TOPK), tl.load(rw_ptr + tl.arange(0, KP) % TOPK))
        sel, rows = tl.arange(0, KP) == pid_t, pid_t + tl.arange(0, BLOCK_M)
        e, rw1, rmask = tl.sum(tl.where(sel, ids, 0), axis=0), tl.sum(tl.where(sel, p, 0.0), axis=0), rows == pid_t
    else:
        e = tl.load(table_ptr + pid_t)
        if e < 0:
            return
        rows = tl.load(table_ptr + stride_tt + pid_t) + tl.arange(0, BLOCK_M)
        rmask = rows < tl.load(table_ptr + 2 * stride_tt + pid_t)
    pair = rows.to(tl.int64) if ROUTE else tl.load(order_ptr + rows, mask=rmask, other=0).to(tl.int64)
    xrow = pair // TOPK if GATE_UP else rows.to(tl.int64)  # gate_up gathers tokens; down reads its rows
    r, n = tl.arange(0, BLOCK_N), pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tile = tl.minimum(n // 64, tl.cdiv(N, 64) - 1).to(tl.int64)[:, None]  # rows past N re-read the last tile
    w_ptrs = w_ptr + e.to(tl.int64) * stride_we + tile * stride_wn + (r % 64)[:, None] * 8 + tl.arange(0, 8)[None, :]
    s_ptrs = s_ptr + e.to(tl.int64) * stride_se + tile * stride_sn + (r % 64)[:, None] * 2 + tl.arange(0, 2)[None, :]
    k, x_ptrs = tl.arange(0, 64), x_ptr + xrow[None, :] * stride_xm + tl.arange(0, 64)[:, None]  # [64, BM]
    k0, k1 = split * tl.cdiv(K, 64) // SPLITS, (split + 1) * tl.cdiv(K, 64) // SPLITS  # split-K, none empty (ops)
    # Triton pipelines no 1-byte loads, so the scales are prefetched one tile ahead by hand
    sc_next = tl.load(s_ptrs + k0 * 128, mask=k0 < k1, other=127).to(tl.int32)  # [BN, 2]
    # the epilogue's inputs, loaded here and first used after the loop (an op on them here would wait for DRAM)
    row_exp = tl.load(s_ptrs + tl.cdiv(K, 64) * 128)  # [BN, 2] uint8, tile KT: the row's B + 127
    bias = tl.load(bias_ptr + e * stride_be + tl.minimum(n, N - 1), mask=(split == 0) | GATE_UP, other=0.0)
    rw = 0.0 if GATE_UP else (tl.where(rmask, rw1, 0.0) if ROUTE else tl.load(rw_ptr + pair, mask=rmask, other=0.0))
    _pdl(not GATE_UP)
    acc = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    tl.assume(k1 > k0)  # with x fp16 in memory, the MMA runs asynchronously under the next step's decode
    for kt in range(k0, k1):
        sc = ((sc_next + 14) << 23).to(tl.float32, bitcast=True).to(tl.float16)  # [BN, 2] 2^(s-B-127) * 2^14
        sc_next = tl.load(s_ptrs + (kt + 1) * 128, mask=kt + 1 < k1, other=127).to(tl.int32)
        wf = _fp4x8(tl.reshape(tl.load(w_ptrs + kt * 512), [BLOCK_N * 2, 4]))  # [BN * 2 groups, 32]
        wf = tl.reshape(tl.reshape(wf, [BLOCK_N, 2, 32]) * sc[:, :, None], [BLOCK_N, 64])  # exact: 1 bit x 2^k
        xt = tl.load(x_ptrs + kt * 64, mask=rmask[None, :] & (kt * 64 + k < K)[:, None], other=0.0)  # [64, BM]
        acc = tl.dot(wf.to(xt.dtype), xt, acc, input_precision=PREC)  # x from its cp.async buffer: no copy
    if GATE_UP and SPLITS > 1:  # the last split to finish sums all the splits' partials in split order (the
        tid = pid_t * tl.num_programs(1) + pid_n  # same sum whatever order they ran in), then the epilogue
        part = part_ptr + tid.to(tl.int64) * SPLITS * BLOCK_N * BLOCK_M + r[:, None] * BLOCK_M + tl.arange(0, BLOCK_M)
        tl.store(part + split * BLOCK_N * BLOCK_M, acc, mask=rmask[None, :])
        if _count(cnt_ptr + tid, SPLITS) < SPLITS - 1:
            return
        acc = tl.load(part, mask=rmask[None, :], other=0.0, cache_modifier=".cg")
        for i in tl.static_range(1, SPLITS):
            acc += tl.load(part + i * BLOCK_N * BLOCK_M, mask=rmask[None, :], other=0.0, cache_modifier=".cg")
    row_exp, _ = tl.split(row_exp.to(tl.int32))
    acc = tl.trans(acc * (row_exp << 23).to(tl.float32, bitcast=True)[:, None] + bias[:, None])  # [BM, BN]
    if GATE_UP:  # rows 2j / 2j+1 are gate / up of unit j
        gate, up = tl.split(tl.reshape(acc, [BLOCK_M, BLOCK_N // 2, 2]))
        gate, up = tl.minimum(gate, LIMIT), tl.minimum(tl.maximum(up, -LIMIT), LIMIT)
        y = (up + 1.0) * gate * tl.sigmoid(ALPHA * gate)
        c = pid_n * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
        tl.store(out_ptr + rows[:, None].to(tl.int64) * stride_om + c[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=rmask[:, None] & (c < N // 2)[None, :])
    else:  # weight by the router, scatter to the pair's own row(s): out.view(T, TOPK * SPLITS, H)
        y = acc * rw[:, None]
        tl.store(out_ptr + (pair * SPLITS + split)[:, None] * stride_om + n[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=rmask[:, None] & (n < N)[None, :])


# Sampling inside the CUDA graph: one program per row streams the logits once. temperature 0 is argmax
# (lowest index among ties, like torch.argmax); otherwise Gumbel-max over z / temperature among the
# logits >= floor (top-k / top-p / min-p folded into one threshold). The noise is a hash of (seed, step,
# token id), so a seeded request draws the same tokens whatever else the batch holds.
@triton.jit
def _sample_kernel(logit_ptr, out_ptr, temp_ptr, floor_ptr, seed_ptr, step_ptr, V, stride_lb, BLOCK_V: tl.constexpr):
    _pdl()
    b = tl.program_id(0)
    temp, low, seed, step = tl.load(temp_ptr + b), tl.load(floor_ptr + b), tl.load(seed_ptr + b), tl.load(step_ptr + b)
    key = ((seed ^ (seed >> 32) * 0x27D4EB2F) * 0x9E3779B1 + step * 0x85EBCA77).to(tl.uint32)  # int64s: wrap mod 2^32
    best, best_i = tl.full([BLOCK_V], float("-inf"), tl.float32), tl.zeros([BLOCK_V], tl.int32)
    for v0 in range(0, V, BLOCK_V):
        v = v0 + tl.arange(0, BLOCK_V)
        z = tl.load(logit_ptr + b * stride_lb + v, mask=v < V, other=float("-inf")).to(tl.float32)
        if temp > 0:
            x = key + v.to(tl.uint32) * 0xC2B2AE3D  # murmur3 finalizer: uniform 32-bit noise per token
            x = (x ^ (x >> 16)) * 0x85EBCA6B
            x = (x ^ (x >> 13)) * 0xC2B2AE35
            u = (((x ^ (x >> 16)) >> 9).to(tl.float32) + 0.5) * (1.0 / 8388608.0)  # (0, 1): 23 bits keep + 0.5 exact
            z = tl.where((z >= low) & (v < V), z / temp - tl.log(-tl.log(u)), float("-inf"))
        best, best_i = tl.where(z > best, z, best), tl.where(z > best, v, best_i)  # both from the old best
    tl.store(out_ptr + b, tl.min(tl.where(best == tl.max(best, axis=0), best_i, V), axis=0))


