"""Device: current MoE kernel vs moe_d (swap-AB, word decode) at gpt-oss shapes. Prints a table, JSON to $OUT."""
import itertools, json, os, sys, time
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.join(os.getcwd(), "scratch"))
import torch, triton, triton.language as tl
from model import ops as K
from moe_d import moe_d, repack
from moe_v import moe_d2, moe_nos, moe_e
KS = dict(d=moe_d, d2=moe_d2, nos=moe_nos, e=moe_e)

dev = "cuda"
OUT = os.environ.get("OUT", "/tmp")
res = []

def gemm_d(x, w, s, bias, out, table, order, rw, top_k, gate_up, block_m, cfg):
    kn, bn, groups, warps, stages = cfg
    E, N, KW = w.shape
    grid = (table.shape[1], triton.cdiv(N, bn))
    KS[kn][grid](x, w, s, bias, out, table, order, rw, N, KW * 8, x.stride(0), w.stride(0), w.stride(1),
                s.stride(0), s.stride(1), bias.stride(0), out.stride(0), table.stride(0),
                TOPK=top_k, GATE_UP=gate_up, LIMIT=7.0, ALPHA=1.702, BLOCK_M=block_m, BLOCK_N=bn, GROUPS=groups,
                DT=tl.float16, PREC="tf32", num_warps=warps, num_stages=stages)

def bench(f):
    return triton.testing.do_bench(f, warmup=10, rep=40, return_mode="median")

for E in [32]:
    H = I = 2880
    g = torch.Generator(device=dev).manual_seed(0)
    bl1 = torch.randint(0, 256, (E, 2 * I, H // 32, 16), dtype=torch.uint8, device=dev)
    bl2 = torch.randint(0, 256, (E, H, I // 32, 16), dtype=torch.uint8, device=dev)
    sc1 = torch.randint(118, 123, (E, 2 * I, H // 32), dtype=torch.uint8, device=dev)
    sc2 = torch.randint(118, 123, (E, H, I // 32), dtype=torch.uint8, device=dev)
    b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
    km = lambda b, s: (b.reshape(E, b.shape[1], -1).transpose(1, 2).contiguous(), s.transpose(1, 2).contiguous())
    (w1k, s1k), (w2k, s2k) = km(bl1, sc1), km(bl2, sc2)
    w1d, w2d = repack(bl1), repack(bl2)
    for T in [1, 64, 256]:
        x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
        logits = torch.randn(T, E, device=dev)
        block_m = 16 if T * 4 <= 16 * E else 64
        table, order, rw = K.moe_route(logits, 4, block_m)
        experts = len(set(table[0].tolist()) - {-1})
        nb1 = experts * (bl1[0].numel() + sc1[0].numel()); nb2 = experts * (bl2[0].numel() + sc2[0].numel())
        act = torch.empty(T * 4, I, device=dev, dtype=torch.bfloat16); out = torch.empty(T * 4, H, device=dev)
        K._moe_gemm(x, w1k, s1k, b1, act, table, order, rw, 4, True, 7.0, block_m)
        K._moe_gemm(act, w2k, s2k, b2, out, table, order, rw, 4, False, 7.0, block_m)
        ref_act, ref_out = act.clone(), out.clone()
        t1 = bench(lambda: K._moe_gemm(x, w1k, s1k, b1, act, table, order, rw, 4, True, 7.0, block_m))
        t2 = bench(lambda: K._moe_gemm(act, w2k, s2k, b2, out, table, order, rw, 4, False, 7.0, block_m))
        rec = dict(E=E, T=T, kernel="current", t1_us=t1 * 1e3, t2_us=t2 * 1e3, gbs1=nb1 / t1 / 1e6, gbs2=nb2 / t2 / 1e6)
        res.append(rec); print(rec, flush=True)
        bns = [64, 128] if block_m == 16 else [64, 128]
        for cfg in list(itertools.product(['d', 'd2', 'nos', 'e'], [64, 128], [2], [4], [3, 5, 8])) + [('d2', 128, 2, 8, 4), ('e', 128, 2, 8, 4)]:
            try:
                act.fill_(float("nan")); out.fill_(float("nan"))
                gemm_d(x, w1d, sc1, b1, act, table, order, rw, 4, True, block_m, cfg)
                e1 = ((act.float() - ref_act.float()).norm() / ref_act.float().norm()).item()
                gemm_d(ref_act, w2d, sc2, b2, out, table, order, rw, 4, False, block_m, cfg)
                e2 = ((out - ref_out).norm() / ref_out.norm()).item()
                t1 = bench(lambda: gemm_d(x, w1d, sc1, b1, act, table, order, rw, 4, True, block_m, cfg))
                t2 = bench(lambda: gemm_d(act, w2d, sc2, b2, out, table, order, rw, 4, False, block_m, cfg))
            except Exception as ex:
                print(E, T, cfg, type(ex).__name__, str(ex)[:200]); continue
            rec = dict(E=E, T=T, kernel="d", cfg=cfg, err1=e1, err2=e2, t1_us=t1 * 1e3, t2_us=t2 * 1e3,
                       gbs1=nb1 / t1 / 1e6, gbs2=nb2 / t2 / 1e6)
            res.append(rec)
        json.dump(res, open(f"{OUT}/bench_d.json", "w"))
print("\n== summary (best per E, T for each gemm)")
for E in [32]:
    for T in [1, 64, 256]:
        rs = [r for r in res if r["E"] == E and r["T"] == T]
        if not rs: continue
        cur = [r for r in rs if r["kernel"] == "current"][0]
        d = [r for r in rs if r["kernel"] == "d"]
        for kn in KS:
          dk = [r for r in d if r["cfg"][0] == kn]
          b1 = min(dk, key=lambda r: r["t1_us"]); b2 = min(dk, key=lambda r: r["t2_us"])
          print(f"E{E} T{T}: current gu {cur['t1_us']:.1f}us {cur['gbs1']:.0f}GB/s dn {cur['t2_us']:.1f}us {cur['gbs2']:.0f} | "
              f"d gu {b1['t1_us']:.1f}us {b1['gbs1']:.0f}GB/s {b1['cfg']} err {b1['err1']:.1e} | dn {b2['t2_us']:.1f}us {b2['gbs2']:.0f}GB/s {b2['cfg']} err {b2['err2']:.1e}")
