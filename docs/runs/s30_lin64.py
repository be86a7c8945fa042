"""T=64 dense projections: cuBLAS vs kernels._linear_kernel configs (bf16 partials), 24 weight copies per graph."""
import itertools, json, os, sys
from pathlib import Path
import torch, torch.nn.functional as F, triton
sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "cookbook")]
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

res = []
T, L = 64, 24
cfgs = [(s, bn, bk, st, wp, pre) for s in (1, 2, 4, 8) for bn, wp in ((64, 4), (128, 4), (128, 8)) for bk in (64,)
        for st in (3, 4) for pre in (64, 256) if not (bn == 128 and pre == 256 and wp == 4)]
for name, N, Kd in [("O", 2880, 4096), ("QKV", 5120, 2880)]:
    ws = [torch.randn(N, Kd, device="cuda", dtype=torch.bfloat16) for _ in range(L)]
    b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(T, Kd, device="cuda", dtype=torch.bfloat16)
    h = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
    nw = torch.ones(N, device="cuda", dtype=torch.bfloat16)
    base = graph_us([lambda w=w: F.linear(x, w, b) for w in ws])
    chain = graph_us([lambda w=w: ops.add_rmsnorm(h, nw, 1e-5, F.linear(x, w, b)) for w in ws]) if name == "O" else 0
    print(f"{name} T={T}: cuBLAS {base:.2f} us ({N*Kd*2/base/1e3:.0f} GB/s), with add_rmsnorm {chain:.2f}", flush=True)
    rows = []
    for c in cfgs:
        try:
            t = graph_us([lambda w=w: lin(x, w, b, *c) for w in ws])
            tc = graph_us([lambda w=w: ops.add_rmsnorm(h, nw, 1e-5, lin(x, w, b, *c)) for w in ws]) if name == "O" else 0
        except Exception as e:
            print("  ", c, type(e).__name__, str(e)[:80]); continue
        rows.append((t, tc, c)); res.append(dict(name=name, cfg=c, us=t, chain_us=tc, cublas=base, cublas_chain=chain))
    rows.sort(key=lambda r: r[1] if name == "O" else r[0])
    for t, tc, c in rows[:6]:
        print(f"   S,BN,BK,st,warps,pre={c}: {t:.2f} us ({N*Kd*2/t/1e3:.0f} GB/s), with add_rmsnorm {tc:.2f}", flush=True)
out = os.environ.get("OUT", ".")
Path(out, "lin64.jsonl").write_text("\n".join(json.dumps(r) for r in res) + "\n")
