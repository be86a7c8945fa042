"""Launchers for kernels.py, each in one order: check shapes, strides and dtypes; allocate the output;
compute the grid; launch. Tile configs are fixed, each with how it was chosen (no run-time autotuning).

Legend: T tokens in the step, B sequences, H hidden, D head dim, NH/NKV heads, G = NH // NKV,
P cache rows, E experts, K in-features, N out-features, A = T * TOPK (token, expert) pairs, V vocab."""
import torch
import torch.nn.functional as F
import triton

import kernels as K


def _dot_precision(dtype):  # float32 mode must be exact fp32, not tf32
    return "ieee" if dtype == torch.float32 else "tf32"


def add_rmsnorm(h, w, eps, delta=None, dtype=None):
    """h: [T, H] residual, updated in place when delta ([T, H] or [T, R, H]) is given. Returns norm(h), in dtype."""
    assert h.dim() == 2 and h.stride(1) == 1 and w.shape == (h.shape[1],)
    if delta is not None:
        delta = delta if delta.dim() == 3 else delta[:, None]  # [T, R, H]
        assert delta.shape[0] == h.shape[0] and delta.shape[2] == h.shape[1] and delta.stride(2) == 1
    out = torch.empty(h.shape, device=h.device, dtype=dtype or h.dtype)
    d = delta if delta is not None else h[:, None]
    # 32 warps, 4 features per thread, so the row's loads are all in flight: per call at 1 token 2.00 -> 1.44 us,
    # 3.53 -> 2.85 us with 20 partial rows; at 64 tokens 2.81 -> 1.96 (4, 8, 16 warps timed too; H200)
    K._add_rmsnorm_kernel[(h.shape[0],)](h, d, w, out, h.stride(0), d.stride(0), d.stride(1), out.stride(0),
                                       h.shape[1], eps, R=d.shape[1] if delta is not None else 0,
                                       BLOCK_N=triton.next_power_of_2(h.shape[1]), num_warps=32, launch_pdl=True)
    return out


def rope_kv(src, nh, nkv, pos=None, cos_sin=None, k_cache=None, v_cache=None, slots=None, dtype=None, page=None):
    """src: qkv [T, NH + 2 NKV, D], changed in place, or the QKV projection's split-K partials
    [T, S, NH + 2 NKV, D], summed into a new qkv of `dtype`. Rotates q and k when pos is given; appends k, v to
    the caches ([P, NKV, D]) when slots is given: at rows slots [T] (-1 = skip), or with pos, through page tables
    slots [T, W] of `page` rows a page (decode: token t is sequence t's). Returns qkv."""
    partial, (T, heads, D) = src.dim() == 4, (src.shape[0], *src.shape[-2:])
    assert heads == nh + 2 * nkv and src.stride(-1) == 1 and src.stride(-2) == D
    assert not partial or dtype is not None, "partials: dtype given"
    rotate, write, paged = pos is not None, slots is not None, slots is not None and slots.dim() == 2  # paged: decode
    if rotate:
        assert pos.shape == (T,) and cos_sin.shape[1] == D and cos_sin.dtype == torch.float32
    qkv = dummy = torch.empty((T, heads, D), device=src.device, dtype=dtype) if partial else src  # dummy: unused args
    if write:
        assert slots.shape[0] == T and (not paged or (rotate and page)) and k_cache.shape[1:] == (nkv, D)
        assert k_cache.dtype == qkv.dtype and v_cache.stride() == k_cache.stride()
    # a program per token and 32 head rows: one token's 40 KB of bf16 partials are read by 3 SMs, not one
    K._rope_kv_kernel[(T, triton.cdiv(heads, 32))](
        src, qkv, pos if rotate else dummy, cos_sin if rotate else dummy, k_cache if write else dummy,
        v_cache if write else dummy, slots if write else dummy, src.stride(0), src.stride(1) if partial else 0,
        qkv.stride(0), cos_sin.stride(0) if rotate else 0, k_cache.stride(0) if write else 0,
        slots.stride(0) if write else 0, slots.stride(1) if paged else 0, NH=nh, NKV=nkv, D=D, BLOCK_H=32,
        SPLITS=src.shape[1] if partial else 1, STORE=partial or rotate, ROTATE=rotate, WRITE=write,
        PAGE=page if paged else 1, launch_pdl=True)
    return qkv


def attention(qkv, k_cache, v_cache, block_table, cu_seqlens, start, sinks, nh, nkv, window, page,
              max_q, splits=1, out=None, tiles=None, appended=False, counters=None):
    """qkv: [T, NH + 2 NKV, D] after RoPE; caches [P, NKV, D]; block_table [B, W] (stride 0 pages for a ring);
    cu_seqlens [B + 1] token offsets; start [B] cached tokens before the chunk; appended: the caches hold the
    chunk's k, v too (decode). window 0 = full causal. splits > 1 splits the keys (decode, long contexts), counting
    in counters (zeroed int32 scratch, left zeroed; None: a new one per call). tiles: (BLOCK_N, warps, stages) in
    place of the fixed ones (cookbook/bench_attention.py). Returns [T, NH, D]."""
    (T, heads, D), B, G = qkv.shape, start.shape[0], nh // nkv
    assert heads == nh + 2 * nkv and qkv.stride(1) == D and qkv.stride(2) == 1
    assert k_cache.shape[1:] == (nkv, D) and v_cache.stride() == k_cache.stride() and k_cache.stride(1) == D
    assert cu_seqlens.shape == (B + 1,) and block_table.shape[0] == B and sinks.shape == (nh,)
    out = torch.empty((T, nh, D), device=qkv.device, dtype=qkv.dtype) if out is None else out
    assert splits & (splits - 1) == 0 and out.shape == (T, nh, D) and out.is_contiguous(), "splits 2^n, out [T, NH, D]"
    block_t = max(16 // G, 1) if max_q == 1 else max(128 // G, 1)
    grid = (B, triton.cdiv(max_q, block_t), nkv * splits)
    part, ml, cnt = out, out, out  # unused when splits == 1
    if splits > 1:  # fp32 partials, their (m, l), and a count per (sequence, query block, kv head) for the last split
        part = torch.empty((splits, T, nh, D), device=qkv.device, dtype=torch.float32)
        ml = torch.empty((splits, T, nh, 2), device=qkv.device, dtype=torch.float32)
        cnt = torch.zeros(B * grid[1] * nkv, device=qkv.device, dtype=torch.int32) if counters is None else counters
        assert cnt.numel() >= B * grid[1] * nkv and cnt.dtype == torch.int32
    # BLOCK_T * G query rows >= 16 for tl.dot. Decode (cookbook/bench_attention.py, H200, 1,000 keys): 2 stages, 128-key
    # tiles where a program reads 128+ keys (a window, one split): full b1 4.67 -> 4.04 us, b64 40.2 -> 36.4. Prefill:
    # 128 rows, 8 warps: a 4,096-token chunk after 118,784 keys 27.7 -> 23.0 ms a full layer against 64 rows, 4 warps
    block_n, warps, stages = tiles or ((64, 8, 3) if max_q > 1 else (128 if window or splits == 1 else 64, 4, 2))
    K._attention_kernel[grid](qkv, k_cache, v_cache, block_table, cu_seqlens, start, sinks, out, part, ml, cnt,
                            qkv.stride(0), k_cache.stride(0), block_table.stride(0), block_table.stride(1),
                            part.stride(0) if splits > 1 else 0, nh * D, D ** -0.5,
                            NH=nh, NKV=nkv, D=D, G=G, WINDOW=window, PAGE=page, SPLITS=splits, APPENDED=appended,
                            BLOCK_T=block_t, BLOCK_N=block_n, PREC=_dot_precision(qkv.dtype), num_warps=warps,
                            num_stages=stages, launch_pdl=True)
    return out


def linear_partials(x, w, b, splits, block_n, block_k, stages=1, pre_k=None, n_out=None, block_t=None, dtype=None):
    """x [T, K] @ w [N, K]^T + b [N], split over K: [T, S, n_out or N] partials of `dtype`, bias in split 0,
    for add_rmsnorm, rope_kv or top-k to sum in a fixed order; N..n_out unwritten; pre_k in-features above the wait"""
    (T, k_in), N = x.shape, w.shape[0]
    assert w.shape == (N, k_in) and b.shape == (N,) and x.stride(1) == w.stride(1) == 1 and (pre_k or 0) % block_k == 0
    out = torch.empty((T, splits, n_out or N), device=x.device, dtype=dtype or torch.float32)  # [T, S, N]
    block_t = block_t or (16 if T <= 16 else 64)  # tl.dot's N >= 16
    grid = (triton.cdiv(N, block_n), splits, triton.cdiv(T, block_t))
    K._linear_kernel[grid](x, w, b, out, T, N, k_in, x.stride(0), w.stride(0), out.stride(0), out.stride(1),
                           BLOCK_T=block_t, BLOCK_N=block_n, BLOCK_K=block_k, SPLITS=splits,
                           PREC=_dot_precision(x.dtype), PRE_K=pre_k or block_k, num_stages=stages, launch_pdl=True)
    return out


def linear(x, w, b, splits=8, upto=16):
    """x [T, K] @ w [N, K]^T + b: [T, N]; at T <= upto [T, S, N] partials in x's dtype (add_rmsnorm, rope_kv sum)"""
    if x.shape[0] > upto:  # QKV at 64 tokens: cuBLAS 10.35 us, this 10.46 (H200, s30); O: below
        return F.linear(x, w, b)
    # O projection (2880 x 4096) at 1 and 8 tokens: cuBLAS 11.1 us, this 7.8 (gemv_splitk.py); QKV 10.1 -> 9.2 at 4
    # splits. 256 in-features (32 KB) of weights above the PDL wait, 3 stages, 3 programs an SM: 20b b1 +2.5% (s17).
    # Above 16 tokens 64 (an x peel of [256, T] too): O + add_rmsnorm at 64 11.82 -> 10.05 us, 20b b64 +0.35% (s30)
    pre_k = 256 if x.shape[0] <= 16 else 64
    return linear_partials(x, w, b, min(splits, triton.cdiv(x.shape[1], 64)), 64, 64, 3, pre_k, dtype=x.dtype)


def moe_route(x, wr, br, top_k, block_m, one=False):
    """x: [T, H] normed activations; wr [E, H], br [E]: the router. Returns the tile table [3, n_tiles] (expert
    or -1, first row, end row), order [A] (pair ids grouped by expert) and the router weights [A]. one (one token):
    the router's [1, S, EP] partials, then the k expert ids and weights (the partials again where E <= 32)."""
    (T, H), E = x.shape, wr.shape[0]
    assert wr.shape == (E, H) and br.shape == (E,) and x.stride(1) == wr.stride(1) == 1 and not (one and T > 1)
    # the router GEMV in 128-feature K slices: 23 programs per 16 tokens of 8-32 KB each (one program: 17 us a layer;
    # cuBLAS 6.5 us with its reduce). top-k sums a token's S partials in one [SP, EP] load (a loop over S: 4 us)
    S, EP = triton.cdiv(H, 128), max(16, triton.next_power_of_2(E))  # EP: tl.dot's N >= 16
    part = linear_partials(x, wr, br, S, EP, 128, n_out=EP, block_t=16)  # [T, S, EP] partial logits
    if one and E <= 32:  # no top-k launch: 20b b1 631.1 -> 638.9 tok/s (H200, docs/optimizations.md, s27)
        return part, part, part
    A = T * top_k
    ids, order = torch.empty((2, A), device=x.device, dtype=torch.int32)  # [A] each
    w = torch.empty(A, device=x.device, dtype=torch.float32)
    K._topk_kernel[(T,)](part, ids, w, E, S, TOPK=top_k, KP=triton.next_power_of_2(top_k), EP=EP,
                         SP=triton.next_power_of_2(S), launch_pdl=True)
    if one:  # over 32 experts top-k in every MoE program cost more than this launch (120b b1 -2.6%, s28)
        return part, ids, w
    n_tiles = min(triton.cdiv(A, block_m) + E, A)  # every used tile holds at least one pair
    table = torch.empty((3, triton.cdiv(n_tiles, 16) * 16), device=x.device, dtype=torch.int32)  # % 16: _tiles_kernel
    # 256-pair blocks to 4,096 pairs: 1,024 (20b b256) 3.5 us in 4 programs, 9.3 in one (a 1,024-key sort); at 32,768
    block = min(256 if A <= 4096 else 1024, max(16, triton.next_power_of_2(A)))  # 1,024: 25 us, 256: 35.7 (H100, s52)
    K._tiles_kernel[(triton.cdiv(A, block),)](ids, order, table, A, table.shape[1], EP=EP, BLOCK_M=block_m,
                                              BLOCK=block, launch_pdl=True)
    return table[:, :n_tiles], order, w  # [3, n_tiles] of rows padded to 16


def _moe_gemm(x, w, s, bias, out, table, order, rw, top_k, gate_up, limit, block_m, n, tiles=None, splits=1,
              counters=None):
    E, NB, KT, _, _ = w.shape
    assert w.shape[3:] == (64, 8) and w.dtype == torch.int32 and s.shape == (E, NB, KT + 1, 64, 2)
    assert s.dtype == torch.uint8 and w.is_contiguous() and s.is_contiguous() and NB * 64 >= n and splits <= KT
    assert triton.cdiv(x.shape[1], 64) == KT and x.stride(1) == 1 and bias.shape == (E, n) and bias.stride(1) == 1
    # (BLOCK_N, warps, stages) from cookbook/bench_moe.py on the H200 (2026-11-29, again 11-30 with 1-64 tokens):
    # (128, 4, 3) is the best or within 5% of it below 64 pairs. From 64 pairs 256 columns: a program's x tile and
    # scales serve twice the weights (5.4 instead of 6.7 instructions per weight byte, cookbook/sass_count.py)
    # where the loop is bound by issue; below, 128 keeps twice the programs (bench_moe.py --tiles, 20b: 16 tokens
    # 152.9 -> 143.3 us, 8: 114.9 -> 121.0). 2 stages or 8 warps lose 20-60% at 64 x 256; 128 x 256 timed at 8
    route = table.dim() == 3  # one token: top-k of the router's [1, S, EP] partials, or given in order, rw (SP 0)
    block_n, warps, stages = tiles or ((256, max(4, block_m // 16), 3) if len(order) >= 64 else (128, 4, 3))
    S, EP = table.shape[1:] if route else (1, 16)
    grid = (top_k if route else table.shape[1], triton.cdiv(n, block_n), splits)
    # split gate_up: fp32 partials per (tile, block, split), and per (tile, block) a count that starts at zero
    # and that the last split to arrive sets back to zero (placeholders otherwise)
    part, cnt = out, table
    if gate_up and splits > 1:
        part = torch.empty(grid[0] * grid[1] * splits * block_n * block_m, device=x.device, dtype=torch.float32)
        cnt = torch.zeros(grid[0] * grid[1], device=x.device, dtype=torch.int32) if counters is None else counters
        assert cnt.dtype == torch.int32 and cnt.numel() >= grid[0] * grid[1]
    K._moe_kernel[grid](x, w, s, bias, out, table, order, rw, part, cnt, n, x.shape[1], x.stride(0), w.stride(0),
                      w.stride(1), s.stride(0), s.stride(1), bias.stride(0), out.stride(0),
                      S if route else table.stride(0), E, ROUTE=route, KP=triton.next_power_of_2(top_k), EP=EP,
                      SP=triton.next_power_of_2(S) * (order.dim() == 3), TOPK=top_k, GATE_UP=gate_up, LIMIT=limit,
                      ALPHA=1.702, BLOCK_M=block_m, BLOCK_N=block_n, SPLITS=splits, num_warps=warps, num_stages=stages,
                      PREC=_dot_precision(x.dtype), launch_pdl=True)


def k_splits(programs, device, cap):
    """K splits for a MoE GEMM of `programs` (tile, 128-column block) programs: ~20 programs per SM. For the
    down projection the best of 1-8 splits at 1-128 tokens to within 5% (cookbook/bench_moe.py --down-splits,
    H200, 20b): at 4 tokens 44.9 us (1 split) -> 29.3 (6); with bf16 rows 8 (20b b1 +0.4%; 12: -2%), 7 (one wave). For
    the gate_up 2 splits (--up-splits): 25.1 -> 20.0 us at 1 token; 4 splits 22.0, and any split loses at 8 tokens."""
    sms = torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 2
    return max(1, min(cap, 20 * sms // programs))


def down_splits(T, n_tiles, H, I, device, block_m=16):
    """The down's K splits (add_rmsnorm's rows per pair; none empty) and tiles (None: _moe_gemm's). One token: 256
    columns, 8 splits (s21). 128 columns, 1 split: 64-row tiles that would split K (20b 129-400 tokens; b256 +2.5%,
    s52), 128-row ones up to 4,096 tokens (20b TTFT -2%, s53). Else <= 7, and 3 where k_splits gives 2 from 80 tokens
    (20b 80-100; H100: b96 +1.0%, b80 +0.8%, b72 even, b64 -0.8%; s57), not 1 (H200 b80 -1.1%, b96 -1.3%; s56)"""
    if T == 1:
        return min(8, triton.cdiv(I, 64)), (256, 4, 3)
    s = k_splits(n_tiles * triton.cdiv(H, 128), device, min(7, triton.cdiv(I, 64)))
    s = 3 if s == 2 and T >= 80 and I > 128 else s  # I > 128: 3 K blocks of 64 to split
    return (1, (128, 4, 3)) if block_m == 64 and s > 1 or block_m == 128 and T <= 4096 else (s, None)


def moe(x, wr, br, w1, s1, b1, w2, s2, b2, top_k, limit, counters=None):
    """x: [T, H] normed activations; wr [E, H], br [E]: the router. w1/s1, w2/s2: gate_up and down experts (tiled by
    model/weights.pack_experts); b1 [E, 2I], b2 [E, H]. counters: zeroed int32 scratch the split gate_up leaves zeroed
    (None: one per call). Returns [T, R, H] partials that add_rmsnorm sums (R = top_k x down splits; bf16 if x fp16)."""
    (T, H), I = x.shape, b1.shape[1] // 2
    assert wr.shape[0] == w1.shape[0] and b2.shape[1] == H
    # 16-row tiles while experts see few tokens (decode); 64 rows once a weight tile serves many (b256 on 20b: 886 us
    # a layer at 16); 128 over 1,024 20b tokens (bf16-decode trial, H100, s42: 4,096 -4.8%, 2,048 even, 1,024 +9.5%)
    block_m = 16 if T * top_k <= 16 * w1.shape[0] else 64 if T * top_k <= 128 * w1.shape[0] else 128
    table, order, rw = moe_route(x, wr, br, top_k, block_m, one=T == 1)
    act = torch.empty((T * top_k, I), device=x.device, dtype=x.dtype)  # [A, I] in expert order
    # split K while the tiles x 128-column blocks leave SMs idle (decode at small batch: 4 experts x 45 gate_up
    # blocks = 180 programs for 132 SMs); add_rmsnorm sums the down partials, the gate_up sums its own
    n_tiles = top_k if T == 1 else table.shape[1]
    up_splits = k_splits(n_tiles * triton.cdiv(2 * I, 128), x.device, min(2, triton.cdiv(H, 64)))
    splits, tiles = down_splits(T, n_tiles, H, I, x.device, block_m)
    pd = torch.bfloat16 if x.dtype == torch.float16 else x.dtype  # partial rows: the residual's range, not fp16's
    out = torch.empty((T * top_k * splits, H), device=x.device, dtype=pd)  # [A * S, H] pair order
    _moe_gemm(x, w1, s1, b1, act, table, order, rw, top_k, True, limit, block_m, 2 * I, splits=up_splits,
              counters=counters)
    # the down reads table, order and rw above its PDL wait (kernels._moe_kernel): the gate_up must run in between
    _moe_gemm(act, w2, s2, b2, out, table, order, rw, top_k, False, limit, block_m, H, tiles, splits)
    return out.view(T, top_k * splits, H)


def sampling_floor(logits, temperature, top_k, top_p, min_p, k_cap=1024):
    """Per row, the lowest logit that top-k, top-p and min-p (on logits / temperature) all keep, from the
    k_cap largest logits. top_k in [0, k_cap] (0 = off). A nucleus wider than k_cap tokens is not cut."""
    vals = torch.topk(logits, min(k_cap, logits.shape[1]), dim=-1).values  # [B, C], descending
    t = temperature.clamp_min(1e-5)[:, None]
    k = top_k.clamp(1, vals.shape[1]).long()[:, None]
    floor_k = torch.where(top_k > 0, vals.gather(1, k - 1)[:, 0], float("-inf"))
    cum = torch.cumsum(torch.exp(vals / t - torch.logsumexp(logits / t, -1, keepdim=True)), -1)  # [B, C]
    first = (cum < top_p[:, None]).sum(-1, keepdim=True).clamp(max=vals.shape[1] - 1)
    floor_p = torch.where((top_p < 1) & (cum[:, -1] >= top_p), vals.gather(1, first)[:, 0], float("-inf"))
    floor_m = torch.where(min_p > 0, vals[:, 0] + t[:, 0] * torch.log(min_p.clamp_min(1e-30)), float("-inf"))
    return torch.maximum(torch.maximum(floor_k, floor_p), floor_m)


def sample(logits, temperature, seed, step, floor=None):
    """logits [B, V] float32; per row: temperature (0 = greedy), seed, step (tokens generated so far) and
    floor (logits below it are out; from sampling_floor, None = keep all). Returns token ids [B] (int64)."""
    B, V = logits.shape
    floor = torch.full_like(temperature, float("-inf")) if floor is None else floor
    assert logits.stride(1) == 1 and temperature.shape == floor.shape == seed.shape == step.shape == (B,)
    out = torch.empty(B, device=logits.device, dtype=torch.int64)
    # 8192-wide strips, 8 warps: 25 steps over a 201,088 vocab, 32 KB of fp32 logits in flight per program.
    # Greedy in a CUDA graph (cookbook/bench_small_ops.py, H200): 18.0 -> 11.3 us at 1 row, 36.8 -> 23.2 at 64
    # against 4096 x 4 warps; 16384 x 16: 19.2 / 30.1; torch.argmax: 8.5 / 28.4. The interpreter takes a whole row
    block_v = 8192 if logits.is_cuda else triton.next_power_of_2(V)
    K._sample_kernel[(B,)](logits, out, temperature, floor, seed, step, V, logits.stride(0), BLOCK_V=block_v,
                           num_warps=8, launch_pdl=True)
    return out
