"""MoE routing in one launch at small batch, prepared 2026-11-30 (third session), not yet run on a GPU.

Why: at batch 1 the engine routes with three launches per layer, the router GEMV split over K (1.8 us), top-k
(1.9 us) and the tile table (1.8 us): 5.5 us per layer, 132 us of a 2,098 us 20b step (profile at 206d408).
Each is a latency chain of one or a few programs. Here the router's K slices count themselves with an atomic
(as the split gate_up does in kernels._moe_kernel) and the last slice to finish sums the partials in slice
order, takes each token's top-k and builds the tile table, all in the same program: one launch.
Prediction: ~3.5 us less per layer at 1-4 tokens, ~85 us per 20b step at batch 1 (~+4%). At more tokens the
last program's serial top-k per token grows (~0.2-0.3 us each, a guess), so the engine would keep the three
launches there. The outputs must equal ops.moe_route's exactly (the same sums in the same order).

    TRITON_INTERPRET=1 python cookbook/moe_variants/route_fused.py     # CPU check against ops.moe_route
    python cookbook/moe_variants/route_fused.py --bench                # H200: against ops.moe_route
"""
import argparse
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernels as KN  # noqa: E402
from common import graph_us  # noqa: E402
from model import ops  # noqa: E402


@triton.jit
def _topk_token(part_ptr, b_ptr, ids_ptr, w_ptr, t, E, S, TOPK: tl.constexpr, KP: tl.constexpr, EP: tl.constexpr,
                SP: tl.constexpr):  # kernels._topk_kernel's body for token t, partials read through L2
    e, kk, s = tl.arange(0, EP), tl.arange(0, KP), tl.arange(0, SP)[:, None]
    part = tl.load(part_ptr + (t * S + s) * EP + e[None, :], mask=s < S, other=0.0, cache_modifier=".cg")
    lg = tl.sum(part, axis=0) + tl.load(b_ptr + e, mask=e < E, other=float("-inf")).to(tl.float32)
    ids, vals = tl.zeros([KP], tl.int32), tl.full([KP], float("-inf"), tl.float32)
    for k in tl.static_range(TOPK):
        m = tl.max(lg, axis=0)
        idx = tl.min(tl.where(lg == m, e, EP), axis=0)
        ids, vals = tl.where(kk == k, idx, ids), tl.where(kk == k, m, vals)
        lg = tl.where(e == idx, float("-inf"), lg)
    p = tl.exp(vals - tl.max(vals, axis=0))
    tl.store(ids_ptr + t * TOPK + kk, ids, mask=kk < TOPK)
    tl.store(w_ptr + t * TOPK + kk, p / tl.sum(p, axis=0), mask=kk < TOPK)


@triton.jit
def _tiles_body(ids_ptr, order_ptr, table_ptr, A, n_tiles, stride_tt, EP: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK: tl.constexpr):  # kernels._tiles_kernel's body, ids read through L2
    e, b = tl.arange(0, EP)[None, :], tl.arange(0, BLOCK)
    counts = tl.zeros([EP], tl.int32)
    for p0 in range(0, A, BLOCK):
        ids = tl.load(ids_ptr + p0 + b, mask=p0 + b < A, other=EP, cache_modifier=".cg")
        counts += tl.sum((ids[:, None] == e).to(tl.int32), axis=0)
    tiles = (counts + BLOCK_M - 1) // BLOCK_M
    tile_end, start = tl.cumsum(tiles, axis=0), tl.cumsum(counts, axis=0) - counts
    for i0 in range(0, n_tiles, BLOCK):
        i = i0 + b
        ex = tl.sum((tile_end[None, :] <= i[:, None]).to(tl.int32), axis=1)
        sel = e == ex[:, None]
        row0 = KN._pick(sel, start) + (i - KN._pick(sel, tile_end) + KN._pick(sel, tiles)) * BLOCK_M
        tl.store(table_ptr + i, tl.where(i < tl.sum(tiles, axis=0), ex, -1), mask=i < n_tiles)
        tl.store(table_ptr + stride_tt + i, row0, mask=i < n_tiles)
        tl.store(table_ptr + 2 * stride_tt + i, KN._pick(sel, start) + KN._pick(sel, counts), mask=i < n_tiles)
    for p0 in range(0, A, BLOCK):
        ids = tl.load(ids_ptr + p0 + b, mask=p0 + b < A, other=EP, cache_modifier=".cg")
        hot = (ids[:, None] == e).to(tl.int32)
        rank = tl.cumsum(hot, axis=0) - hot + start[None, :]
        tl.store(order_ptr + tl.sum(hot * rank, axis=1), p0 + b, mask=p0 + b < A)
        start += tl.sum(hot, axis=0)


@triton.jit
def _route_small_kernel(x_ptr, w_ptr, b_ptr, part_ptr, cnt_ptr, ids_ptr, rw_ptr, order_ptr, table_ptr,
                        T, E, K, stride_xt, stride_we, S, n_tiles, stride_tt, TOPK: tl.constexpr,
                        KP: tl.constexpr, EP: tl.constexpr, SP: tl.constexpr, BLOCK_T: tl.constexpr,
                        BLOCK_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK: tl.constexpr, PREC: tl.constexpr):
    KN._pdl()
    ks = tl.program_id(0)  # one K slice; all T <= BLOCK_T tokens
    t, c, e = tl.arange(0, BLOCK_T), ks * BLOCK_K + tl.arange(0, BLOCK_K), tl.arange(0, EP)
    x = tl.load(x_ptr + t[:, None] * stride_xt + c[None, :], mask=(t[:, None] < T) & (c < K)[None, :], other=0.0)
    w = tl.load(w_ptr + e[None, :] * stride_we + c[:, None], mask=(e < E)[None, :] & (c < K)[:, None], other=0.0)
    tl.store(part_ptr + (t[:, None] * S + ks) * EP + e[None, :], tl.dot(x, w, input_precision=PREC),
             mask=t[:, None] < T)
    tl.debug_barrier()  # every thread's partial is stored before the count
    if tl.atomic_add(cnt_ptr, 1, sem="acq_rel") < S - 1:
        return
    tl.store(cnt_ptr, 0)  # zero again for the next launch
    for i in range(T):
        _topk_token(part_ptr, b_ptr, ids_ptr, rw_ptr, i, E, S, TOPK, KP, EP, SP)
    tl.debug_barrier()  # the ids are stored before the tile table reads them
    _tiles_body(ids_ptr, order_ptr, table_ptr, T * TOPK, n_tiles, stride_tt, EP, BLOCK_M, BLOCK)


def moe_route_small(x, wr, br, top_k, block_m, counter):
    """ops.moe_route in one launch for T <= 16 tokens; counter: a zeroed int32 it leaves zeroed."""
    (T, H), E = x.shape, wr.shape[0]
    assert T <= 16 and wr.shape == (E, H) and br.shape == (E,) and x.stride(1) == 1 and wr.stride(1) == 1
    A = T * top_k
    ids = torch.empty(A, device=x.device, dtype=torch.int32)
    w = torch.empty(A, device=x.device, dtype=torch.float32)
    order = torch.empty(A, device=x.device, dtype=torch.int32)
    n_tiles = min(triton.cdiv(A, block_m) + E, A)
    table = torch.empty((3, n_tiles), device=x.device, dtype=torch.int32)
    EP, S = max(16, triton.next_power_of_2(E)), triton.cdiv(H, 128)
    part = torch.empty((T, S, EP), device=x.device, dtype=torch.float32)  # [T, S, EP] partial logits
    block = min(128 if EP <= 32 else 16, max(16, triton.next_power_of_2(max(A, n_tiles))))
    _route_small_kernel[(S,)](x, wr, br, part, counter, ids, w, order, table, T, E, H, x.stride(0), wr.stride(0), S,
                              n_tiles, table.stride(0), TOPK=top_k, KP=triton.next_power_of_2(top_k), EP=EP,
                              SP=triton.next_power_of_2(S), BLOCK_T=16, BLOCK_K=128, BLOCK_M=block_m, BLOCK=block,
                              PREC="ieee" if x.dtype == torch.float32 else "tf32", launch_pdl=True)
    return table, order, w


def check(device):
    torch.manual_seed(0)
    counter = torch.zeros(1, device=device, dtype=torch.int32)
    for T, E, H, dtype in [(1, 32, 2880, torch.float32), (3, 8, 200, torch.float32), (4, 128, 300, torch.float32),
                           (16, 6, 256, torch.float32)]:
        x, wr, br = torch.randn(T, H, device=device), torch.randn(E, H, device=device), torch.randn(E, device=device)
        for _ in range(2):  # the counter comes back zeroed
            got, want = moe_route_small(x, wr, br, 4, 16, counter), ops.moe_route(x, wr, br, 4, 16)
            same = all(torch.equal(g, w) for g, w in zip(got, want)) and int(counter) == 0
            print(f"T={T} E={E} H={H}: table, order and weights equal to ops.moe_route: {same}")
            assert same


def bench():
    """Per layer, in a CUDA graph of 24 layers' routing (distinct router weights), median of 5."""
    for E in [32, 128]:
        wrs = [torch.randn(E, 2880, device="cuda", dtype=torch.bfloat16) for _ in range(24)]
        br = torch.randn(E, device="cuda", dtype=torch.bfloat16)
        counter = torch.zeros(1, device="cuda", dtype=torch.int32)
        for T in [1, 2, 4, 8, 16]:
            x = torch.randn(T, 2880, device="cuda", dtype=torch.bfloat16)
            engine, fused = (lambda wr: ops.moe_route(x, wr, br, 4, 16),
                             lambda wr: moe_route_small(x, wr, br, 4, 16, counter))
            times = [graph_us([lambda wr=wr, fn=fn: fn(wr) for wr in wrs]) for fn in (engine, fused)]
            print(f"E={E} T={T}: ops.moe_route {times[0]:.2f} us, one launch {times[1]:.2f} us per layer", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="store_true")
    if ap.parse_args().bench:
        bench()
    else:
        check("cuda" if torch.cuda.is_available() else "cpu")
