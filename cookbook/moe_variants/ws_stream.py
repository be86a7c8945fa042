"""Hopper warp specialization (Triton 3.6's `tl.range(..., warp_specialize=True)`) against the one-token gate_up's
weight stream (a benchmark and a compile probe, not a test).

    python cookbook/moe_variants/ws_stream.py --probe          # offline (no GPU): which loop forms the pass takes
    python cookbook/moe_variants/ws_stream.py --bench ptr ws_persist --out ws.jsonl   # GPU: one process a kind

Triton 3.6 does warp-specialize on sm_90 (Meta's autoWS pass, `nvidia.passes.hopper`): the loop's TMA loads go to a
producer warp group (40 registers), the rest to two consumer groups (232), 168 registers at launch, so one CTA an
SM. `--probe` compiles small loops for sm_90 and prints which forms the pass accepts. The bench streams the
one-token gate_up's bytes (360 items x 22 steps of a [128, 16] int16 tile, 4 KB, 64 codes a row) through a
stand-in decode with the real one's op count (shift, mask, HMUL2 a code pair) and 4 K=16 dots a step, into 4
accumulators (the pass takes one dot per accumulator a step), over 8 weight copies (none held in the 50 MB L2):
`ptr` is the engine's form (pointer loads, cp.async stages, one program an item; `_bf16x`: x converted from bf16,
`_scaled`: the engine's scale path), `tma` the same by descriptors, `ws` with warp specialization, `*_persist` with
a grid of SMs looping over the items.
"""
import argparse
import json
import os
import sys
import time

import triton
import triton.language as tl

ITEMS, KT, BN, BM, COPIES = 360, 22, 128, 16, 8


@triton.jit
def _dec(w, J: tl.constexpr):  # [R, C] int16 -> [R, C] fp16: stand-in decode of slot J, 2 elements a call
    return tl.inline_asm_elementwise(
        f"{{.reg .b32 u, c; mov.b32 c, 0x3C003C00; shl.b32 u, $1, {3 * J}; and.b32 u, u, 0x8E008E00; "
        f"mul.rn.f16x2 $0, u, c;}}", "=r,r", [w], dtype=tl.float16, is_pure=True, pack=2)


@triton.jit
def _ws_loop(x_desc, w_desc, out_ptr, ITEMS, KT, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr, WS: tl.constexpr,
             PERSIST: tl.constexpr):
    r, m = tl.arange(0, BLOCK_N), tl.arange(0, BLOCK_M)
    for item in range(tl.program_id(0), ITEMS, tl.num_programs(0) if PERSIST else ITEMS):
        acc0 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
        acc1 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
        acc2 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
        acc3 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
        for kt in tl.range(0, KT, warp_specialize=WS):
            wq = w_desc.load([(item * KT + kt) * BLOCK_N, 0])  # [BN, 16] int16
            acc0 = tl.dot(_dec(wq, 0), x_desc.load([kt * 64, 0]), acc0)
            acc1 = tl.dot(_dec(wq, 1), x_desc.load([kt * 64 + 16, 0]), acc1)
            acc2 = tl.dot(_dec(wq, 2), x_desc.load([kt * 64 + 32, 0]), acc2)
            acc3 = tl.dot(_dec(wq, 3), x_desc.load([kt * 64 + 48, 0]), acc3)
        tl.store(out_ptr + (item * BLOCK_N + r)[:, None] * BLOCK_M + m[None, :], acc0 + acc1 + acc2 + acc3)


@triton.jit
def _scaled(a, sc, BLOCK_N: tl.constexpr):  # [BN, 16] fp16 times [BN, 2] group factors: columns 8g..8g+7 are group g
    return tl.reshape(tl.reshape(a, [BLOCK_N, 2, 8]) * sc[:, :, None], [BLOCK_N, 16])


@triton.jit
def _ptr_loop(x_ptr, w_ptr, s_ptr, out_ptr, ITEMS, KT, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
              SCALE: tl.constexpr):
    """SCALE: the engine's scale path (a [BN, 2] byte load a step, prefetched one step ahead, to fp16, times each
    group's 8 columns); x in bf16 converts to fp16 like the engine's x tile."""
    r, m, c, item = tl.arange(0, BLOCK_N), tl.arange(0, BLOCK_M), tl.arange(0, 16), tl.program_id(0)
    acc0 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    acc1 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    acc2 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    acc3 = tl.zeros([BLOCK_N, BLOCK_M], tl.float32)
    if SCALE:
        s_ptrs = s_ptr + (item * KT * BLOCK_N + r)[:, None] * 2 + tl.arange(0, 2)[None, :]  # [BN, 2]
        sc_next = tl.load(s_ptrs).to(tl.int32)
    for kt in range(0, KT):
        wq = tl.load(w_ptr + ((item * KT + kt) * BLOCK_N + r)[:, None] * 16 + c[None, :])  # [BN, 16] int16
        if SCALE:
            sc = ((sc_next + 14) << 23).to(tl.float32, bitcast=True).to(tl.float16)  # [BN, 2]
            sc_next = tl.load(s_ptrs + (kt + 1) * BLOCK_N * 2, mask=kt + 1 < KT, other=127).to(tl.int32)
        xb = x_ptr + (kt * 64 + c)[:, None] * BLOCK_M + m[None, :]  # [16, BM]
        a0, a1, a2, a3 = _dec(wq, 0), _dec(wq, 1), _dec(wq, 2), _dec(wq, 3)
        if SCALE:
            a0, a1, a2, a3 = _scaled(a0, sc, BLOCK_N), _scaled(a1, sc, BLOCK_N), _scaled(a2, sc, BLOCK_N), \
                _scaled(a3, sc, BLOCK_N)
        acc0 = tl.dot(a0, tl.load(xb).to(tl.float16), acc0)
        acc1 = tl.dot(a1, tl.load(xb + 16 * BLOCK_M).to(tl.float16), acc1)
        acc2 = tl.dot(a2, tl.load(xb + 32 * BLOCK_M).to(tl.float16), acc2)
        acc3 = tl.dot(a3, tl.load(xb + 48 * BLOCK_M).to(tl.float16), acc3)
    tl.store(out_ptr + (item * BLOCK_N + r)[:, None] * BLOCK_M + m[None, :], acc0 + acc1 + acc2 + acc3)


@triton.jit
def _probe(x_desc, w_desc, x_ptr, out_ptr, KT, FORM: tl.constexpr):
    r, m = tl.arange(0, 128), tl.arange(0, 16)
    acc, acc1 = tl.zeros([128, 16], tl.float32), tl.zeros([128, 16], tl.float32)
    if FORM == "early return" and tl.program_id(0) > 1000:
        return
    for kt in tl.range(0, KT, warp_specialize=True):
        wq = w_desc.load([0, kt * 16])  # [128, 16] int16
        xt = x_desc.load([kt * 16, 0])  # [16, 16] fp16
        a = _dec(wq, 0)
        if FORM == "pointer load in the loop":
            xt = tl.load(x_ptr + (kt * 16 + tl.arange(0, 16))[:, None] * 16 + m[None, :])
        if FORM == "reshape after the load":  # codes to other columns, as an 8-codes-a-word decode needs
            a = tl.reshape(tl.permute(tl.reshape(a, [128, 2, 8]), [0, 2, 1]), [128, 16])
        if FORM == "join after the load":
            a = tl.sum(tl.join(a, a), axis=2)
        if FORM == "two dots into one accumulator":
            acc = tl.dot(_dec(wq, 1), xt, acc)
        if FORM == "two dots, two accumulators":
            acc1 = tl.dot(_dec(wq, 1), xt, acc1)
        acc = tl.dot(a, xt, acc)
    tl.store(out_ptr + r[:, None] * 16 + m[None, :], acc + acc1)


def probe():
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.backends.compiler import GPUTarget
    sig = dict(x_desc="tensordesc<fp16[16, 16]>", w_desc="tensordesc<i16[128, 16]>", x_ptr="*fp16", out_ptr="*fp32",
               KT="i32", FORM="constexpr")
    for form in ["base", "early return", "pointer load in the loop", "reshape after the load", "join after the load",
                 "two dots into one accumulator", "two dots, two accumulators"]:
        try:
            k = triton.compile(triton.compiler.ASTSource(fn=_probe, signature=sig, constexprs=dict(FORM=form)),
                               target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4, num_stages=3))
            print(f"{form:32s} specialized: {k.metadata.num_warps} warps, setmaxnreg {'setmaxnreg' in k.asm['ptx']}")
        except Exception as e:  # the pass fails the compile (an assertion or a verifier error on stderr)
            print(f"{form:32s} rejected: {str(e).splitlines()[0][:60]}")


def bench(kind, out_path):
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor
    torch.manual_seed(0)
    ws = [torch.randint(-32768, 32767, (ITEMS * KT * BN, 16), dtype=torch.int16, device="cuda") for _ in range(COPIES)]
    x = (torch.randn(KT * 64, BM, device="cuda") * 64).to(torch.bfloat16 if "bf16x" in kind else torch.float16)
    sc = torch.randint(113, 117, (ITEMS * KT, BN, 2), dtype=torch.uint8, device="cuda")  # factors 2^0..2^3
    factor = 2.0 ** (sc.float() - 113) if "scaled" in kind else torch.ones(ITEMS * KT, BN, 2, device="cuda")
    factor = factor.view(ITEMS, KT, BN, 2, 1).expand(-1, -1, -1, -1, 8).reshape(ITEMS, KT, BN, 16)
    wi, ref = ws[0].view(ITEMS, KT, BN, 16).int(), torch.zeros(ITEMS, BN, BM, device="cuda")
    out = torch.empty(ITEMS * BN, BM, device="cuda")
    for j in range(4):  # the stand-in decode from its definition: bits 9-11 and 15 of (w << 3j), as fp16
        u = ((wi << (3 * j)) & 0x8E00).to(torch.int16).view(torch.float16).float() * factor  # [I, KT, BN, 16]
        ref += torch.einsum("iknc,kcm->inm", u, x.float().view(KT, 64, BM)[:, 16 * j:16 * j + 16])
    if kind.startswith("ptr"):
        fn = lambda i: _ptr_loop[(ITEMS,)](x, ws[i], sc, out, ITEMS, KT, BLOCK_N=BN, BLOCK_M=BM,
                                           SCALE="scaled" in kind, num_warps=4, num_stages=3)
    else:
        wds, xd = [TensorDescriptor.from_tensor(t, [BN, 16]) for t in ws], TensorDescriptor.from_tensor(x, [16, BM])
        grid = torch.cuda.get_device_properties(0).multi_processor_count if kind.endswith("persist") else ITEMS
        fn = lambda i: _ws_loop[(grid,)](xd, wds[i], out, ITEMS, KT, BLOCK_N=BN, BLOCK_M=BM, WS=kind.startswith("ws"),
                                         PERSIST=grid < ITEMS, num_warps=4, num_stages=3)
    fn(0)
    torch.cuda.synchronize()
    err = ((out - ref.view(-1, BM)).abs().max() / ref.abs().max()).item()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(24):
            fn(i % COPIES)
    g.replay()
    ts = []
    for _ in range(7):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record(), g.replay(), b.record(), torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / 24)
    us = sorted(ts)[3]
    row = dict(kind=kind, us=round(us, 2), tb_s=round(ITEMS * KT * 4096 / us / 1e6, 3), rel_err=err,
               gpu=torch.cuda.get_device_name(), date=time.strftime("%Y-%m-%d"))
    print(row, flush=True)
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--bench", nargs="+", choices=["ptr", "ptr_bf16x", "ptr_scaled", "ptr_bf16x_scaled", "tma",
                                                   "tma_persist", "ws", "ws_persist"])
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.probe:
        probe()
    for kind in a.bench or []:
        bench(kind, a.out)
