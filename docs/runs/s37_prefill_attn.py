"""Prefill attention for one 4,096-token chunk of one sequence at a given start (keys cached before it),
20b shapes, full (paged) and sliding (ring) layers: us per call and causal TFLOP/s, per kernel variant/config.
The thirty-seventh session's sweep, kept as run (from scratch/ at the repository root, on the device machine):
    git show 39874bd:kernels.py > scratch/kernels_old.py                 # the kernel before 54c2b14
    sed '/s = tl.where(ok, s, float("-inf"))/d' scratch/kernels_old.py > scratch/kernels_nomask.py   # a bound, wrong
    python scratch/prefill_attn.py 0,8192,61440,118784 out.jsonl
Call 4 of that session timed a fourth module, kernels_edge (the mask behind a runtime `if` per tile), in place of
kernels_old; calls 3-4 had kernels.py at 39874bd as KM. docs/runs/s37_c{3,4,5}_prefill_attn.jsonl hold the rows."""
import json, sys, importlib
from pathlib import Path
import torch, triton
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels as KM
import kernels_nomask as KN
import kernels_old as KO

NH, NKV, D, PAGE, RING, G = 64, 8, 64, 256, 128, 8


def setup(start, T, sliding):
    ctx = start + T
    rows = RING if sliding else triton.cdiv(ctx, PAGE) * PAGE + PAGE
    kc = torch.randn(rows, NKV, D, device="cuda", dtype=torch.bfloat16)
    vc = torch.randn_like(kc)
    W = triton.cdiv(ctx, PAGE)
    if sliding:
        table = torch.zeros((1, 1), device="cuda", dtype=torch.int32).expand(1, max(W, 1))
    else:
        table = (torch.randperm(W, device="cuda").to(torch.int32) + 1)[None]
    qkv = torch.randn(T, NH + 2 * NKV, D, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([0, T], device="cuda", dtype=torch.int32)
    st = torch.tensor([start], device="cuda", dtype=torch.int32)
    sinks = torch.randn(NH, device="cuda")
    return kc, vc, table, qkv, cu, st, sinks


def run(mod, args, T, window, block_t, block_n, warps, stages):
    kc, vc, table, qkv, cu, st, sinks = args
    out = torch.empty((T, NH, D), device="cuda", dtype=torch.bfloat16)
    grid = (1, triton.cdiv(T, block_t), NKV)
    f = lambda: mod._attention_kernel[grid](qkv, kc, vc, table, cu, st, sinks, out, out, out, out,
        qkv.stride(0), kc.stride(0), table.stride(0), table.stride(1), 0, NH * D, D ** -0.5,
        NH=NH, NKV=NKV, D=D, G=G, WINDOW=window, PAGE=RING if window else PAGE, SPLITS=1, APPENDED=False,
        BLOCK_T=block_t, BLOCK_N=block_n, PREC="tf32", num_warps=warps, num_stages=stages)
    return triton.testing.do_bench(f, warmup=5, rep=50) * 1e3, out


T = 4096
rows = []
for start in [int(x) for x in sys.argv[1].split(",")]:
    for window in (0, 128):
        args = setup(start if not window else min(start, 127), T, window > 0)
        keys = T * (start + (T + 1) / 2) if not window else T * 128
        flops = 4 * D * NH * keys
        ref = None
        for name, mod, bt, bn, w, s in [("old", KO, 8, 64, 4, 3), ("new", KM, 16, 64, 8, 3), ("nomask", KN, 16, 64, 8, 3),
                                        ("new", KM, 8, 64, 4, 3), ("new", KM, 16, 64, 4, 3), ("new", KM, 32, 64, 8, 3),
                                        ("new", KM, 16, 128, 8, 3), ("new", KM, 16, 64, 8, 4)]:
            try:
                us, out = run(mod, args, T, window, bt, bn, w, s)
            except Exception as e:
                print(name, bt, bn, w, s, "failed", str(e)[:200]); continue
            err = None if ref is None else (out.float() - ref.float()).abs().max().item()
            ref = out if ref is None else ref
            r = dict(start=start if not window else "ring", window=window, kernel=name, block_t=bt, block_n=bn,
                     warps=w, stages=s, us=round(us, 1), tflops=round(flops / us / 1e6, 1), maxdiff_vs_first=err)
            rows.append(r); print(json.dumps(r), flush=True)
if len(sys.argv) > 2:
    Path(sys.argv[2]).write_text("\n".join(json.dumps(r) for r in rows) + "\n")
