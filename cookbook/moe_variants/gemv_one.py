"""The one-token MXFP4 MoE as a CUDA-core GEMV (twenty-ninth session's prototype, not the engine's path).

At one token the engine's _moe_kernel runs a 16-column wgmma with one useful column; its loop is a chain of
cp.async stages, CTA barriers and a drained wgmma a step, and its grid streams at 2.25 TB/s even with nothing to
compute (docs/optimizations.md, sixteenth session). Here each program takes BLOCK_R rows of one expert over its
whole K (or a K split for the down), loads KS 64 x 64 tiles' rows a step straight into registers (no shared memory
for the weights), decodes E2M1 with kernels._fp4x8 and sums code x x in fp32 FFMAs per 32-feature group, scaling each
group's sum once. No split tail: a gate_up program owns its rows' whole K.
Measured on the H200 (2026-12-03): 1.19-1.86x the engine's route + gate_up + down per layer (docs/optimizations.md,
twenty-ninth session). A conversion and an FFMA per code on top of the decode are 6.25 instructions a weight
byte at the least, about what the engine's whole wgmma loop takes (6.6).

    TRITON_INTERPRET=1 python cookbook/moe_variants/gemv_one.py              # check against the engine's kernels
    python cookbook/moe_variants/gemv_one.py --sass                          # offline SASS counts
    python cookbook/moe_variants/gemv_one.py --bench --experts 32            # H200: chain per layer, vs the engine
Shapes: R rows of a program, KS tiles a step, E experts, H hidden, I intermediate.
"""
import argparse
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "cookbook")]
import kernels as KK  # noqa: E402
from model import ops as K  # noqa: E402
from model.weights import pack_experts  # noqa: E402


@triton.jit
def _gemv_kernel(x_ptr, w_ptr, s_ptr, bias_ptr, out_ptr, part_ptr, ids_ptr, rw_ptr, N, K, KT, stride_xm, stride_we,
                 stride_wn, stride_se, stride_sn, stride_be, stride_om, S, E, KP: tl.constexpr, EP: tl.constexpr,
                 SP: tl.constexpr, TOPK: tl.constexpr, GATE_UP: tl.constexpr, LIMIT: tl.constexpr,
                 ALPHA: tl.constexpr, BLOCK_R: tl.constexpr, KS: tl.constexpr, SPLITS: tl.constexpr):
    pair, pid_n, split = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    KK._pdl(GATE_UP)  # the down's routing is two launches old: its weights stream before its wait
    ids, p = KK._topk(part_ptr, 0, E, S, TOPK, KP, EP, SP) if SP else (
        tl.load(ids_ptr + tl.arange(0, KP) % TOPK), tl.load(rw_ptr + tl.arange(0, KP) % TOPK))
    sel = tl.arange(0, KP) == pair
    e, rw = tl.sum(tl.where(sel, ids, 0), axis=0).to(tl.int64), tl.sum(tl.where(sel, p, 0.0), axis=0)
    r, tile = (pid_n * BLOCK_R) % 64 + tl.arange(0, BLOCK_R), (pid_n * BLOCK_R) // 64
    ks = tl.arange(0, KS)
    wb = w_ptr + e * stride_we + tile * stride_wn + r[:, None, None] * 8 + ks[None, :, None] * 512 + \
        tl.arange(0, 8)[None, None, :]  # [R, KS, 8] words: row r's 64 codes of KS tiles
    sb = s_ptr + e * stride_se + tile * stride_sn + r[:, None, None] * 2 + ks[None, :, None] * 128 + \
        tl.arange(0, 2)[None, None, :]  # [R, KS, 2] scale bytes
    xrow = pair // TOPK if GATE_UP else pair
    kf = ks[:, None] * 64 + tl.arange(0, 64)[None, :]  # [KS, 64] features
    per = tl.cdiv(KT, SPLITS)
    k0, k1 = split * per, tl.minimum(KT, split * per + per)
    wv = tl.load(wb + k0 * 512, mask=(k0 + ks < k1)[None, :, None], other=0)  # first step above the wait
    row_exp = tl.load(s_ptr + e * stride_se + tile * stride_sn + KT * 128 + r * 2).to(tl.int32)  # [R]: B + 127
    n = pid_n * BLOCK_R + tl.arange(0, BLOCK_R)
    bias = tl.load(bias_ptr + e * stride_be + tl.minimum(n, N - 1), mask=(split == 0) | GATE_UP, other=0.0)
    KK._pdl(not GATE_UP)
    acc = tl.zeros([BLOCK_R, KS, 2], tl.float32)
    for kt in range(k0, k1, KS):
        m = kt + ks < k1  # [KS]
        sc = tl.load(sb + kt * 128, mask=m[None, :, None], other=0).to(tl.int32)  # [R, KS, 2]
        xv = tl.load(x_ptr + xrow * stride_xm + kt * 64 + kf, mask=m[:, None] & (kt * 64 + kf < K),
                     other=0.0).to(tl.float32)  # [KS, 64]
        wn = tl.load(wb + (kt + KS) * 512, mask=(kt + KS + ks < k1)[None, :, None], other=0)  # next step's words
        wf = KK._fp4x8(tl.reshape(wv, [BLOCK_R * KS * 2, 4]))  # [R * KS * 2 groups, 32] fp16
        wf = tl.reshape(wf, [BLOCK_R, KS, 64]).to(tl.float32)  # [R, KS, 64]
        gs = tl.sum(tl.reshape(wf * xv[None, :, :], [BLOCK_R, KS, 2, 32]), axis=3)  # [R, KS, 2] group sums
        acc += gs * ((sc + 14) << 23).to(tl.float32, bitcast=True)  # 2^(s - B - 127) * 2^14 (the decode's 2^-14)
        wv = wn
    y = tl.sum(tl.sum(acc, axis=2), axis=1) * (row_exp << 23).to(tl.float32, bitcast=True) + bias  # [R]
    if GATE_UP:  # rows 2j / 2j+1 are gate / up of unit j
        gate, up = tl.split(tl.reshape(y, [BLOCK_R // 2, 2]))  # [R / 2] each
        gate, up = tl.minimum(gate, LIMIT), tl.minimum(tl.maximum(up, -LIMIT), LIMIT)
        c = pid_n * (BLOCK_R // 2) + tl.arange(0, BLOCK_R // 2)
        tl.store(out_ptr + pair * stride_om + c, ((up + 1.0) * gate * tl.sigmoid(ALPHA * gate)).to(
            out_ptr.dtype.element_ty), mask=c < N // 2)
    else:
        tl.store(out_ptr + (pair * SPLITS + split) * stride_om + n, (y * rw).to(out_ptr.dtype.element_ty), mask=n < N)


def gemv(x, w, s, bias, out, part, ids, rw, top_k, gate_up, limit, n, block_r=32, ks=2, warps=4, splits=1):
    """One token: x [1, K] (gate_up) or [top_k, K] (down); part: the router's [1, S, EP] partials (top-k here) or
    None with ids, rw given ([top_k] each). Out: [top_k, n / 2] SwiGLU (gate_up) or [top_k * splits, n]."""
    E, NB, KT, _, _ = w.shape
    assert w.shape[3:] == (64, 8) and s.shape == (E, NB, KT + 1, 64, 2) and 64 % block_r == 0 and x.stride(1) == 1
    assert not (gate_up and splits > 1) and triton.cdiv(x.shape[1], 64) == KT
    S, EP = (part.shape[1], part.shape[2]) if part is not None else (1, 16)
    grid = (top_k, triton.cdiv(n, block_r), splits)
    _gemv_kernel[grid](x, w, s, bias, out, part if part is not None else rw, ids, rw, n, x.shape[1], KT, x.stride(0),
                       w.stride(0), w.stride(1), s.stride(0), s.stride(1), bias.stride(0), out.stride(0), S, E,
                       KP=triton.next_power_of_2(top_k), EP=EP, SP=triton.next_power_of_2(S) if part is not None else 0,
                       TOPK=top_k, GATE_UP=gate_up, LIMIT=limit, ALPHA=1.702, BLOCK_R=block_r, KS=ks, SPLITS=splits,
                       num_warps=warps, num_stages=1, launch_pdl=True)


def moe_one(x, wr, br, w1, s1, b1, w2, s2, b2, top_k, limit, cfg=(32, 2, 4), dcfg=(32, 2, 4, 1)):
    """The one-token MoE on the GEMV: route (the engine's), gate_up, down. Returns [1, top_k * splits, H]."""
    part, ids, rw = K.moe_route(x, wr, br, top_k, 16, one=True)
    part, ids, rw = (part, part, part) if ids is part else (None, ids, rw)
    I, H = b1.shape[1] // 2, b2.shape[1]
    act = torch.empty((top_k, I), device=x.device, dtype=x.dtype)
    out = torch.empty((top_k * dcfg[3], H), device=x.device, dtype=x.dtype)
    gemv(x, w1, s1, b1, act, part, ids, rw, top_k, True, limit, 2 * I, *cfg)
    gemv(act, w2, s2, b2, out, part, ids, rw, top_k, False, limit, H, *dcfg)
    return out.view(1, -1, H)  # [1, top_k * splits, H]


def random_layer(E, H, I, dev, dtype):
    u8 = dict(dtype=torch.uint8, device=dev)
    blocks = [torch.randint(0, 256, (E, n, k // 32, 16), **u8) for n, k in [(2 * I, H), (H, I)]]
    packed = [pack_experts(b, torch.randint(118, 123, b.shape[:3], **u8)) for b in blocks]
    return packed, torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)


def check(dev="cpu"):
    """gate_up and down against the engine's kernels at one token, both routing modes."""
    sys.path.insert(0, str(ROOT / "tests"))
    import conftest  # noqa: F401  (the interpreter's bf16-dot shim: the engine's MoE takes bf16 x to a bf16 MMA)
    torch.manual_seed(0)
    for E, H, I, top_k, dtype, cfg, dcfg in [(32, 128, 192, 4, torch.float32, (32, 2, 4), (32, 2, 4, 1)),
                                            (64, 192, 128, 4, torch.float32, (64, 1, 4), (16, 2, 4, 2)),
                                            (32, 128, 128, 4, torch.bfloat16, (32, 4, 4), (32, 1, 4, 3))]:
        ((w1, s1), (w2, s2)), b1, b2 = random_layer(E, H, I, dev, dtype)
        x = torch.randn(1, H, device=dev, dtype=dtype)
        wr, br = torch.randn(E, H, device=dev, dtype=dtype), torch.randn(E, device=dev, dtype=dtype)
        ref = K.moe(x, wr, br, w1, s1, b1, w2, s2, b2, top_k, 7.0).float().sum(1)
        got = moe_one(x, wr, br, w1, s1, b1, w2, s2, b2, top_k, 7.0, cfg, dcfg).float().sum(1)
        err = ((got - ref).abs().max() / ref.abs().max()).item()
        print(f"E={E} H={H} I={I} {dtype}: max rel err {err:.2e}")
        assert err < (1e-4 if dtype == torch.float32 else 3e-2), err


def sass(configs):
    import sass_count as SC  # puts tests/ on the path for test_compile
    sig = {k: "*i32" if k in ("w_ptr", "ids_ptr") else "*u8" if k == "s_ptr" else "*fp32" for k in
           ["x_ptr", "w_ptr", "s_ptr", "bias_ptr", "out_ptr", "part_ptr", "ids_ptr", "rw_ptr"]}
    sig["x_ptr"] = sig["out_ptr"] = "*bf16"
    sig.update({k: "i32" for k in "N K KT stride_xm stride_we stride_wn stride_se stride_sn stride_be stride_om S E"
                .split()})
    for gate_up, R, KS, warps in configs:
        consts = dict(KP=4, EP=32, SP=32 if gate_up else 0, TOPK=4, GATE_UP=gate_up, LIMIT=7.0, ALPHA=1.702,
                      BLOCK_R=R, KS=KS, SPLITS=1 if gate_up else 2)
        text, regs = SC.sass(_gemv_kernel, dict(sig, **{k: "constexpr" for k in consts}), consts, warps, 1)
        loop = SC.main_loop(SC.instructions(text))
        nbytes = R * KS * 32 / (32 * warps)  # weight bytes a thread a step
        pipes = {p: sum(v for o, v in loop.items() if o in ops) for p, ops in SC.PIPES.items()}
        print(f"gate_up={gate_up} R={R} KS={KS} warps={warps}: {regs} regs, loop {sum(loop.values())} instr, "
              f"{sum(loop.values()) / nbytes:.2f}/byte, pipes {pipes}, smem {loop['LDS'] + loop['STS']}, "
              f"top {loop.most_common(8)}")


def bench(E, configs):
    import common
    LAYERS, H, I, TOPK, dev = 8, 2880, 2880, 4, "cuda"
    layers = [random_layer(E, H, I, dev, torch.bfloat16) for _ in range(LAYERS)]
    x = torch.randn(1, H, device=dev, dtype=torch.bfloat16)
    wrs = [torch.randn(E, H, device=dev, dtype=torch.bfloat16) for _ in range(LAYERS)]
    br = torch.randn(E, device=dev, dtype=torch.bfloat16)
    cnt = torch.zeros(4096, device=dev, dtype=torch.int32)
    run = lambda l, f, *a: f(x, wrs[l], br, *layers[l][0][0], layers[l][1], *layers[l][0][1], layers[l][2], TOPK, 7.0,
                             *a)
    base = common.graph_us([lambda l=l: run(l, K.moe, cnt) for l in range(LAYERS)])
    print(f"E={E}: engine route + gate_up + down {base:.2f} us a layer", flush=True)
    for cfg, dcfg in configs:
        try:
            t = common.graph_us([lambda l=l: run(l, moe_one, cfg, dcfg) for l in range(LAYERS)])
        except Exception as ex:  # a config that does not compile or fit
            print(f"  gemv {cfg} {dcfg}: {type(ex).__name__} {ex}"[:200], flush=True)
            continue
        print(f"  gemv gate_up (R, KS, warps)={cfg} down (R, KS, warps, splits)={dcfg}: {t:.2f} us a layer "
              f"({t / base:.3f}x)", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--sass", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--experts", type=int, default=32)
    a = ap.parse_args()
    if a.check or not (a.sass or a.bench):  # the default: CI runs it (tests/test_cookbook.py)
        check("cuda" if torch.cuda.is_available() else "cpu")
    if a.sass:
        sass([(True, 32, 2, 4), (True, 64, 2, 4), (True, 32, 4, 4), (True, 64, 1, 4), (False, 32, 2, 4)])
    if a.bench:
        cf = [((32, 2, 4), (32, 2, 4, 1)), ((64, 2, 4), (32, 2, 4, 2)), ((32, 4, 4), (32, 4, 4, 1)),
              ((16, 4, 4), (16, 4, 4, 1)), ((64, 1, 4), (32, 1, 4, 2)), ((32, 2, 8), (32, 2, 8, 1)),
              ((64, 2, 8), (64, 2, 8, 2)), ((64, 4, 4), (32, 4, 4, 2))]
        bench(a.experts, cf)
