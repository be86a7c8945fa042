"""Load-only ceiling of the MoE weight stream (a benchmark, not a test; GPU only). The engine's grid (experts x
column blocks x K splits), K loop and scales prefetched one step ahead, but no decode and no MMA: the words are
summed. What a load loop with the MXFP4 kernel's launch shape reaches at 1 and 64 tokens. Timed back to back in a
CUDA graph over 8 weight copies (no PDL), like cookbook/bench_moe.py.

    python cookbook/moe_variants/stream_ceiling.py --layouts    # 64-row tiles (the engine's) vs BLOCK_N-row tiles
    python cookbook/moe_variants/stream_ceiling.py              # 1-token shapes, U tiles loaded a step

Layout A is the engine's (model/weights.pack_experts: 64 x 64 tiles, 2 KB contiguous; a 128-column step reads 2
of them 90 KB apart); layout B puts one step's BLOCK_N rows in one contiguous run. Triton pipelines none of these
loads (no dot reads them: LDG, never cp.async, whatever num_stages says), so a program has U tiles in flight a step;
the engine's kernel keeps two cp.async stages ahead. H200 results: docs/optimizations.md, sixteenth session (its
runs passed num_stages 3 and 4 as well, which compile to this same loop).
"""
import argparse
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402


@triton.jit
def _stream(w_ptr, s_ptr, out_ptr, stride_we, stride_wn, stride_se, stride_sn, KT,
            BLOCK_N: tl.constexpr, SPLITS: tl.constexpr, SUPER: tl.constexpr, U: tl.constexpr):
    e, nb, split = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    r = tl.arange(0, BLOCK_N)
    if SUPER:  # layout B: one BLOCK_N-row tile a step, its rows contiguous
        w_ptrs = w_ptr + e.to(tl.int64) * stride_we + nb * stride_wn + r[:, None] * 8 + tl.arange(0, 8)[None, :]
        s_ptrs = s_ptr + e.to(tl.int64) * stride_se + nb * stride_sn + r[:, None] * 2 + tl.arange(0, 2)[None, :]
        wstep, sstep = BLOCK_N * 8, BLOCK_N * 2
    else:  # layout A: BLOCK_N // 64 tiles of 64 rows a step, each 2 KB contiguous
        tile = (nb * (BLOCK_N // 64) + r // 64).to(tl.int64)[:, None]
        w_ptrs = w_ptr + e.to(tl.int64) * stride_we + tile * stride_wn + (r % 64)[:, None] * 8 + tl.arange(0, 8)[None, :]
        s_ptrs = s_ptr + e.to(tl.int64) * stride_se + tile * stride_sn + (r % 64)[:, None] * 2 + tl.arange(0, 2)[None, :]
        wstep, sstep = 512, 128
    k0, k1 = split * KT // SPLITS, (split + 1) * KT // SPLITS
    sc_next = tl.load(s_ptrs + k0 * sstep).to(tl.int32)  # [BN, 2] as the engine: one step ahead by hand
    acc = tl.zeros([BLOCK_N, 8], tl.int32)
    for kt in range(k0, k1, U):
        sc = sc_next
        sc_next = tl.load(s_ptrs + (kt + 1) * sstep, mask=kt + 1 < k1, other=0).to(tl.int32)
        for u in tl.static_range(U):
            w = tl.load(w_ptrs + (kt + u) * wstep, mask=kt + u < k1, other=0)  # [BN, 8] words
            acc += w ^ tl.sum(sc, axis=1)[:, None]
    tl.store(out_ptr + (e * tl.num_programs(1) + nb) * tl.num_programs(2) + split, tl.sum(tl.sum(acc, axis=1), axis=0))


def run(experts, N, K, block_n, splits, layout_b=False, unroll=1, copies=8, E=32):
    """us per launch and GB/s of codes + scales, for `experts` of E experts' [N, K] weights."""
    KT, NB = K // 64, triton.cdiv(N, block_n)
    rows, i32 = NB * block_n, dict(dtype=torch.int32, device="cuda")
    ws = [torch.randint(-2**31, 2**31 - 1, (E, rows * KT * 8), **i32) for _ in range(copies)]
    ss = [torch.randint(0, 255, (E, rows * (KT + 1) * 2), dtype=torch.uint8, device="cuda") for _ in range(copies)]
    out = torch.empty(experts * NB * splits, **i32)
    swn, ssn = (KT * block_n * 8, (KT + 1) * block_n * 2) if layout_b else (KT * 512, (KT + 1) * 128)
    grid = (experts, NB, splits)
    fns = [lambda i=i: _stream[grid](ws[i], ss[i], out, ws[i].stride(0), swn, ss[i].stride(0), ssn, KT,
                                     BLOCK_N=block_n, SPLITS=splits, SUPER=layout_b, U=unroll, num_warps=4)
           for i in range(copies)]
    us = common.graph_us(fns)
    return us, experts * rows * KT * (32 + 2) / us / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layouts", action="store_true", help="layout A vs B at the engine's 1- and 64-token tiles")
    ap.add_argument("--out", help="JSON lines")
    a = ap.parse_args()
    res = []
    if a.layouts:  # (name, experts routed to, N, BLOCK_N, splits): 20b, the engine's launches at 1 and 64 tokens
        shapes = [("gate_up 1 token", 4, 5760, 128, 2), ("down 1 token", 4, 2880, 128, 8),
                  ("gate_up 64 tokens", 26, 5760, 256, 1), ("down 64 tokens", 26, 2880, 256, 2)]
        cases = [(False, 1), (True, 1)]
    else:
        shapes = [("gate_up 1 token", 4, 5760, 128, 2), ("gate_up 1 split", 4, 5760, 128, 1),
                  ("gate_up 4 splits", 4, 5760, 128, 4), ("gate_up 64 col", 4, 5760, 64, 2),
                  ("down 1 token", 4, 2880, 128, 8), ("down 64 col", 4, 2880, 64, 8)]
        cases = [(False, u) for u in (1, 2, 4, 8)]
    for name, experts, N, bn, splits in shapes:
        for layout_b, unroll in cases:
            us, gbs = run(experts, N, 2880, bn, splits, layout_b, unroll)
            res.append(dict(shape=name, block_n=bn, splits=splits, layout="B" if layout_b else "A", unroll=unroll,
                            us=round(us, 2), gb_s=round(gbs)))
            print(f"{name:18s} BN {bn:3d} S {splits} layout {res[-1]['layout']} U {unroll}: "
                  f"{us:6.1f} us {gbs:6.0f} GB/s", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in res)


if __name__ == "__main__":
    main()
