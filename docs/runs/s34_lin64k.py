"""T=64 dense projections: kernels._linear_kernel with BLOCK_K 128 and 16 splits (the thirtieth session's sweep,
docs/runs/s30_lin64.py, held BLOCK_K at 64 and splits at 8 or fewer), against cuBLAS and the engine's O config;
24 weight copies per graph, bf16 partials, O chained with the add_rmsnorm that sums its partial rows."""
import json, os, sys
from pathlib import Path
import torch, torch.nn.functional as F, triton
sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[2] / "cookbook")]
from common import graph_us
from model import ops
import kernels as K

def lin(x, w, b, splits, bn, bk, stages, warps, pre):
    (T, k_in), N = x.shape, w.shape[0]
    out = torch.empty((T, splits, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(N, bn), splits, triton.cdiv(T, 64))
    K._linear_kernel[grid](x, w, b, out, T, N, k_in, x.stride(0), w.stride(0), out.stride(0), out.stride(1),
                           BLOCK_T=64, BLOCK_N=bn, BLOCK_K=bk, SPLITS=splits, PREC="tf32", PRE_K=pre,
                           num_warps=warps, num_stages=stages, launch_pdl=True)
    return out

res, T, L = [], 64, 24
cfgs = [(8, 64, 64, 3, 4, 64)]  # the engine's O config at 64 tokens (26abfa5)
cfgs += [(s, bn, 128, st, 4, 128) for s in (4, 8, 16) for bn in (64, 128) for st in (2, 3)]
cfgs += [(16, 64, 64, st, 4, 64) for st in (3, 4)] + [(16, 128, 64, 3, 4, 64)]
for name, N, Kd in [("O", 2880, 4096), ("QKV", 5120, 2880)]:
    ws = [torch.randn(N, Kd, device="cuda", dtype=torch.bfloat16) for _ in range(L)]
    b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(T, Kd, device="cuda", dtype=torch.bfloat16)
    h = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
    nw = torch.ones(N, device="cuda", dtype=torch.bfloat16)
    base = graph_us([lambda w=w: F.linear(x, w, b) for w in ws])
    chain = graph_us([lambda w=w: ops.add_rmsnorm(h, nw, 1e-5, F.linear(x, w, b)) for w in ws]) if name == "O" else 0
    print(f"{name} T={T}: cuBLAS {base:.2f} us ({N*Kd*2/base/1e3:.0f} GB/s), with add_rmsnorm {chain:.2f}", flush=True)
    ref = F.linear(x.float(), ws[0].float(), b.float())
    for c in cfgs:
        if c[0] * c[2] > Kd * 2:
            continue
        try:
            err = (lin(x, ws[0], b, *c).float().sum(1) - ref).abs().max().item()
            t = graph_us([lambda w=w: lin(x, w, b, *c) for w in ws])
            tc = graph_us([lambda w=w: ops.add_rmsnorm(h, nw, 1e-5, lin(x, w, b, *c)) for w in ws]) if name == "O" else 0
        except Exception as e:
            print("  ", c, type(e).__name__, str(e)[:80], flush=True); continue
        res.append(dict(name=name, cfg=c, us=t, chain_us=tc, cublas=base, cublas_chain=chain, max_err=err))
        print(f"   S,BN,BK,st,warps,pre={c}: {t:.2f} us ({N*Kd*2/t/1e3:.0f} GB/s), with add_rmsnorm {tc:.2f}, "
              f"max err {err:.3f}", flush=True)
Path(os.environ.get("OUT", "."), "lin64k.jsonl").write_text("\n".join(json.dumps(r) for r in res) + "\n")
