"""Micro-benchmarks for the small ops of a decode step (H200): add_rmsnorm warps, projection call forms,
lm_head fp32 output, sampling. Times per call inside a CUDA graph of N calls over distinct buffers."""
import sys, json, triton, torch, torch.nn.functional as F
sys.path.insert(0, ".")
import kernels as K
from model import ops
dev = "cuda"
res = {}

def graph_us(fns, reps=10):
    for f in fns: f()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fns: f()
    ts = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps): g.replay()
        b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / reps / len(fns))
    return sorted(ts)[2]

H, L = 2880, 24
# add_rmsnorm: (T, R) cases, warps 4 / 8 / 16
for T, R in [(1, 1), (1, 20), (64, 1), (64, 4), (8, 1), (8, 4)]:
    hs = [torch.randn(T, H, device=dev, dtype=torch.bfloat16) for _ in range(L)]
    ds = [torch.randn(T, R, H, device=dev) for _ in range(L)]
    w = torch.randn(H, device=dev, dtype=torch.bfloat16)
    outs = [torch.empty_like(h) for h in hs]
    row = []
    for nw in [4, 8, 16, 32]:
        fns = [lambda h=h, d=d, o=o: K._add_rmsnorm_kernel[(T,)](h, d, w, o, h.stride(0), d.stride(0), d.stride(1),
               o.stride(0), H, 1e-5, R=R, HAS_DELTA=True, BLOCK_N=4096, num_warps=nw, launch_pdl=True)
               for h, d, o in zip(hs, ds, outs)]
        row.append(graph_us(fns))
    res[f"add_rmsnorm T={T} R={R}"] = row
    print(f"add_rmsnorm T={T:3d} R={R:2d}: warps 4/8/16/32 " + " ".join(f"{t:.2f}" for t in row) + " us", flush=True)

# projections: O [2880, 4096], QKV [5120, 2880]: F.linear+bias vs mv / addmv at M=1, F.linear at M=64
for name, N, Kd in [("O", 2880, 4096), ("QKV", 5120, 2880)]:
    Ws = [torch.randn(N, Kd, device=dev, dtype=torch.bfloat16) for _ in range(L)]
    b = torch.randn(N, device=dev, dtype=torch.bfloat16)
    for M in [1, 8, 64]:
        x = torch.randn(M, Kd, device=dev, dtype=torch.bfloat16)
        t_lin = graph_us([lambda W=W: F.linear(x, W, b) for W in Ws])
        t_nob = graph_us([lambda W=W: F.linear(x, W) for W in Ws])
        t_mm = graph_us([lambda W=W: torch.mm(W, x.t()) for W in Ws])
        extra = ""
        if M == 1:
            t_mv = graph_us([lambda W=W: torch.mv(W, x[0]) for W in Ws])
            t_addmv = graph_us([lambda W=W: torch.addmv(b, W, x[0]) for W in Ws])
            extra = f" mv {t_mv:.2f} addmv {t_addmv:.2f}"
            res[f"{name} M={M} mv"] = t_mv; res[f"{name} M={M} addmv"] = t_addmv
        gb = N * Kd * 2 / 1e3
        res[f"{name} M={M}"] = dict(linear_bias=t_lin, linear=t_nob, mm_t=t_mm)
        print(f"{name} M={M:2d}: linear+bias {t_lin:.2f} ({gb / t_lin:.0f} GB/s) linear {t_nob:.2f} W@x^T {t_mm:.2f}{extra} us", flush=True)

# lm_head: .float() after bf16 vs out_dtype fp32
V = 201088
Wl = torch.randn(V, H, device=dev, dtype=torch.bfloat16)
for M in [1, 64]:
    x = torch.randn(M, H, device=dev, dtype=torch.bfloat16)
    t_a = graph_us([lambda: F.linear(x, Wl).float()], reps=20)
    try:
        t_b = graph_us([lambda: torch.mm(x, Wl.t(), out_dtype=torch.float32)], reps=20)
    except Exception as e:
        t_b = float("nan"); print("out_dtype:", type(e).__name__, str(e)[:200])
    res[f"lm_head M={M}"] = dict(float_after=t_a, out_dtype=t_b)
    print(f"lm_head M={M:2d}: linear().float() {t_a:.1f} us, mm(out_dtype=fp32) {t_b:.1f} us", flush=True)
    lg = torch.randn(M, V, device=dev)
    t = torch.zeros(M, device=dev); sd = torch.zeros(M, device=dev, dtype=torch.int64)
    t_s = graph_us([lambda: ops.sample(lg, t, sd, sd)], reps=20)
    res[f"sample M={M}"] = t_s
    print(f"sample greedy B={M}: {t_s:.1f} us", flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
