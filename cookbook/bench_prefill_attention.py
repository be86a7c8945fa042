"""Prefill attention alone (benchmark, not a test): one CHUNK-token chunk of one sequence after START cached keys,
20b shapes (64 query heads, 8 kv heads, head dim 64), a full layer through 256-row pages and a sliding layer
through a 128-row ring. Per tile config (BLOCK_T tokens x 8 heads = query rows a program, BLOCK_N, warps,
stages, and optionally ptxas's register cap: 128 keeps two 8-warp programs an SM) and per source tree: each
--trees directory's kernels.py is imported on its own, so a prepared patch (cookbook/patches, `ab.sh prepare`)
is timed against main in one process. Prints us per call (do_bench's median), causal TFLOP/s (4 x D x heads x
query-key pairs), and each output's largest difference from the first row's at that point (all the rows
compute the same attention).

    python cookbook/bench_prefill_attention.py --start 0 118784 --out prefill_attn.jsonl
    python cookbook/bench_prefill_attention.py --trees . scratch/ab_attn_prev_pv --configs 16,64,8,3 16,64,8,3,128
"""
import argparse
import importlib.util
import time
from pathlib import Path

import torch
import triton

from common import emit  # cookbook/, the script's folder

NH, NKV, D, PAGE, RING = 64, 8, 64, 256, 128
G = NH // NKV


def kernels_of(tree, i):
    spec = importlib.util.spec_from_file_location(f"kernels_{i}", Path(tree) / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def setup(start, T, sliding):
    """Caches holding start + T keys (a shuffled block table), or one 128-row ring; the chunk's qkv."""
    ctx = start + T
    rows = RING if sliding else triton.cdiv(ctx, PAGE) * PAGE + PAGE
    kc = torch.randn(rows, NKV, D, device="cuda", dtype=torch.bfloat16)  # [rows, NKV, D]
    W = triton.cdiv(ctx, PAGE)
    table = (torch.zeros((1, 1), device="cuda", dtype=torch.int32).expand(1, W) if sliding  # [1, W], stride 0
             else (torch.randperm(W, device="cuda").to(torch.int32) + 1)[None])
    qkv = torch.randn(T, NH + 2 * NKV, D, device="cuda", dtype=torch.bfloat16)  # [T, NH + 2 NKV, D]
    cu = torch.tensor([0, T], device="cuda", dtype=torch.int32)
    return kc, torch.randn_like(kc), table, qkv, cu, torch.tensor([start], device="cuda", dtype=torch.int32)


def time_one(mod, args, sinks, window, cfg):
    """us per call of the tree's kernel at one tile config, as model/ops.attention launches prefill."""
    kc, vc, table, qkv, cu, st = args
    block_t, block_n, warps, stages, *cap = cfg
    T = qkv.shape[0]
    out = torch.empty((T, NH, D), device="cuda", dtype=torch.bfloat16)
    grid = (1, triton.cdiv(T, block_t), NKV)
    f = lambda: mod._attention_kernel[grid](
        qkv, kc, vc, table, cu, st, sinks, out, out, out, out, qkv.stride(0), kc.stride(0), table.stride(0),
        table.stride(1), 0, NH * D, D ** -0.5, NH=NH, NKV=NKV, D=D, G=G, WINDOW=window, PAGE=RING if window else PAGE,
        SPLITS=1, APPENDED=False, BLOCK_T=block_t, BLOCK_N=block_n, PREC="tf32", num_warps=warps, num_stages=stages,
        **dict(maxnreg=cap[0]) if cap else {})
    return triton.testing.do_bench(f, warmup=5, rep=200, return_mode="median") * 1e3, out  # >= 9 calls a point


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trees", nargs="+", default=[str(Path(__file__).resolve().parents[1])])
    ap.add_argument("--start", type=int, nargs="+", default=[0, 8192, 61440, 118784])
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--configs", nargs="+", default=["16,64,8,3"], help="BLOCK_T,BLOCK_N,warps,stages[,maxnreg]")
    ap.add_argument("--out")
    a = ap.parse_args()
    mods = [kernels_of(t, i) for i, t in enumerate(a.trees)]
    sinks = torch.randn(NH, device="cuda")
    T = a.chunk
    for start, window in [(s, 0) for s in a.start] + [(min(a.start[-1], RING - 1), RING)]:
        args = setup(start, T, window > 0)
        pairs = T * 128 if window else T * (start + (T + 1) / 2)  # query-key pairs attended (a bound for the ring)
        ref = None
        for tree, mod in zip(a.trees, mods):
            for cfg in a.configs:
                c = tuple(map(int, cfg.split(",")))
                try:
                    us, out = time_one(mod, args, sinks, window, c)
                except Exception as e:  # a config a tree cannot build (shared memory, registers): say so, go on
                    print(f"{tree} {cfg}: failed: {str(e)[:200]}")
                    continue
                diff = None if ref is None else (out.float() - ref.float()).abs().max().item()
                ref = out if ref is None else ref
                r = dict(tree=tree, start=start, window=window, chunk=T, config=cfg, us=round(us, 1),
                         tflops=round(4 * D * NH * pairs / us / 1e6, 1), maxdiff=diff, gpu=torch.cuda.get_device_name(),
                         date=time.strftime("%Y-%m-%d %H:%M"))
                emit(r, a.out)


if __name__ == "__main__":
    main()
