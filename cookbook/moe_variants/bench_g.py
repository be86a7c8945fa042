"""Device: current MoE kernel vs e (row layout) vs g (tiled layout). Table + JSON to $OUT."""
import itertools, json, os, sys
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.join(os.getcwd(), "scratch"))
import torch, triton, triton.language as tl
from model import ops as K
from moe_d import repack
from moe_v import moe_e
from moe_g import moe_g, pack_experts
dev, OUT, res = "cuda", os.environ.get("OUT", "/tmp"), []

def launch(kern, x, w, s, bias, out, table, order, rw, gate_up, block_m, N, Kdim, cfg, ws, ss):
    bn, warps, stages = cfg
    grid = (table.shape[1], triton.cdiv(N, bn))
    kern[grid](x, w, s, bias, out, table, order, rw, N, Kdim, x.stride(0), w.stride(0), ws,
               s.stride(0), ss, bias.stride(0), out.stride(0), table.stride(0),
               TOPK=4, GATE_UP=gate_up, LIMIT=7.0, ALPHA=1.702, BLOCK_M=block_m, BLOCK_N=bn, GROUPS=2,
               DT=tl.float16, PREC="tf32", num_warps=warps, num_stages=stages)

bench = lambda f: triton.testing.do_bench(f, warmup=10, rep=40, return_mode="median") * 1e3
for E, Ts in [(32, [1, 8, 64, 256]), (128, [1, 64])]:
    H = I = 2880
    bl1 = torch.randint(0, 256, (E, 2 * I, H // 32, 16), dtype=torch.uint8, device=dev)
    bl2 = torch.randint(0, 256, (E, H, I // 32, 16), dtype=torch.uint8, device=dev)
    sc1 = torch.randint(118, 123, (E, 2 * I, H // 32), dtype=torch.uint8, device=dev)
    sc2 = torch.randint(118, 123, (E, H, I // 32), dtype=torch.uint8, device=dev)
    b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
    km = lambda b, s: (b.reshape(E, b.shape[1], -1).transpose(1, 2).contiguous(), s.transpose(1, 2).contiguous())
    (w1k, s1k), (w2k, s2k) = km(bl1, sc1), km(bl2, sc2)
    w1e, w2e = repack(bl1), repack(bl2)
    (w1g, s1g), (w2g, s2g) = pack_experts(bl1, sc1), pack_experts(bl2, sc2)
    for T in Ts:
        x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
        block_m = 16 if T * 4 <= 16 * E else 64
        table, order, rw = K.moe_route(torch.randn(T, E, device=dev), 4, block_m)
        ex = len(set(table[0].tolist()) - {-1})
        nb1, nb2 = ex * (bl1[0].numel() + sc1[0].numel()), ex * (bl2[0].numel() + sc2[0].numel())
        act = torch.empty(T * 4, I, device=dev, dtype=torch.bfloat16); out = torch.empty(T * 4, H, device=dev)
        K._moe_gemm(x, w1k, s1k, b1, act, table, order, rw, 4, True, 7.0, block_m)
        K._moe_gemm(act, w2k, s2k, b2, out, table, order, rw, 4, False, 7.0, block_m)
        ra, ro = act.clone(), out.clone()
        t1 = bench(lambda: K._moe_gemm(x, w1k, s1k, b1, act, table, order, rw, 4, True, 7.0, block_m))
        t2 = bench(lambda: K._moe_gemm(ra, w2k, s2k, b2, out, table, order, rw, 4, False, 7.0, block_m))
        res.append(dict(E=E, T=T, k="current", cfg=None, t1=t1, t2=t2, gb1=nb1 / t1 / 1e3, gb2=nb2 / t2 / 1e3))
        for kn, cfg in itertools.product(["e", "g"], [(64, 4, 3), (64, 4, 5), (64, 4, 8), (128, 4, 3), (128, 4, 4), (128, 8, 3), (128, 8, 5)]):
            if kn == "e":
                a1 = (moe_e, x, w1e, sc1, b1, act, table, order, rw, True, block_m, 2 * I, H, cfg, w1e.stride(1), sc1.stride(1))
                a2 = (moe_e, ra, w2e, sc2, b2, out, table, order, rw, False, block_m, H, I, cfg, w2e.stride(1), sc2.stride(1))
            else:
                a1 = (moe_g, x, w1g, s1g, b1, act, table, order, rw, True, block_m, 2 * I, H, cfg, w1g.stride(1), s1g.stride(1))
                a2 = (moe_g, ra, w2g, s2g, b2, out, table, order, rw, False, block_m, H, I, cfg, w2g.stride(1), s2g.stride(1))
            try:
                act.fill_(float("nan")); out.fill_(float("nan"))
                launch(*a1); launch(*a2)
                e1 = ((act.float() - ra.float()).norm() / ra.float().norm()).item()
                e2 = ((out - ro).norm() / ro.norm()).item()
                t1, t2 = bench(lambda: launch(*a1)), bench(lambda: launch(*a2))
            except Exception as exn:
                print(E, T, kn, cfg, type(exn).__name__, str(exn)[:300]); continue
            res.append(dict(E=E, T=T, k=kn, cfg=cfg, e1=e1, e2=e2, t1=t1, t2=t2, gb1=nb1 / t1 / 1e3, gb2=nb2 / t2 / 1e3))
        json.dump(res, open(f"{OUT}/bench_g.json", "w"))
        rs = [r for r in res if r["E"] == E and r["T"] == T]
        for kn in ["current", "e", "g"]:
            rk = [r for r in rs if r["k"] == kn]
            a = min(rk, key=lambda r: r["t1"]); b = min(rk, key=lambda r: r["t2"])
            print(f"E{E} T{T} {kn:8s} gu {a['t1']:6.1f}us {a['gb1']:5.0f}GB/s {a['cfg']} err {a.get('e1', 0):.0e} | "
                  f"dn {b['t2']:6.1f}us {b['gb2']:5.0f}GB/s {b['cfg']} err {b.get('e2', 0):.0e} | sum {a['t1'] + b['t2']:6.1f}", flush=True)
