"""Tile sweep for the MXFP4 MoE GEMMs at gpt-oss shapes (benchmark, not a test): time per layer inside a CUDA
graph over LAYERS copies of the experts (so no layer's weights sit in the 50 MB L2), bytes of the experts routed
to, achieved GB/s. The winner is hard-coded in model/ops._moe_gemm.

    python cookbook/bench_moe.py --tokens 1 64 --experts 32
    python cookbook/bench_moe.py --tokens 1 2 4 8 --up-splits 1 2 3 4     # gate_up K splits (engine tiles)
    python cookbook/bench_moe.py --tokens 1 2 4 8 16 32 64 128 --down-splits 1 2 3 4 6 8
    python cookbook/bench_moe.py --tokens 64 256 --tiles 128,4,3 256,4,3 --block-m 32   # other tiles, tile rows
    python cookbook/bench_moe.py --tokens 1 8 64 --chain     # route -> gate_up -> down -> add_rmsnorm per layer
    python cookbook/bench_moe.py --tokens 8 64 --chain --down-splits 1 2 3   # the same chain, the down at each split

Kernels timed back to back overlap their launches and tails with copies of themselves, which the engine never
does: a change that sped up the 1-token gate_up by 3.4 us a layer back to back lost 0.5 us a layer after routing,
and 1.2% end to end (docs/optimizations.md, thirteenth session); at 8 tokens the down at 1 K split timed 10%
faster alone and ran the step 3.0% slower (fifty-fifth). --chain times the engine's order, add_rmsnorm's sum of
the down's partial rows included.
"""
import argparse
import itertools
import json
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402
from model import ops as K  # noqa: E402
from model.weights import pack_experts  # noqa: E402

LAYERS = 8


def graph_us(fn):
    """us per call of fn(l) over the LAYERS layer copies, in one CUDA graph (common.graph_us)."""
    return common.graph_us([lambda l=l: fn(l) for l in range(LAYERS)])


def make_layers(E, H=2880, I=2880, dev="cuda"):
    """LAYERS copies of packed random experts [(gate_up w, s), (down w, s)], scales near 2^-7."""
    layers = []
    for _ in range(LAYERS):
        u8 = dict(dtype=torch.uint8, device=dev)
        blocks = [torch.randint(0, 256, (E, n, k // 32, 16), **u8) for n, k in [(2 * I, H), (H, I)]]
        layers.append([pack_experts(b, torch.randint(118, 123, b.shape[:3], **u8)) for b in blocks])
    return layers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", nargs="+", type=int, default=[1, 64])
    ap.add_argument("--experts", type=int, default=32)
    ap.add_argument("--down-splits", nargs="+", type=int, help="time the down projection at these K splits "
                    "(engine tile config) instead of the tile sweep")
    ap.add_argument("--up-splits", nargs="+", type=int, help="time the gate_up at these K splits (engine tiles)")
    ap.add_argument("--tiles", nargs="+", help="(BLOCK_N,warps,stages) configs to sweep, e.g. 128,4,3 256,4,3 "
                    "(default: 64/128 x 4/8 warps x 3/4/6 stages); with --up/down-splits, the first one")
    ap.add_argument("--block-m", type=int, help="rows per tile (default: the engine's 16, 64 or 128)")
    ap.add_argument("--chain", action="store_true", help="time routing + gate_up + down + add_rmsnorm per layer "
                    "(engine tiles; with --down-splits, once per split)")
    ap.add_argument("--out", help="JSON lines: every config's gate_up and down time at every token count")
    a = ap.parse_args()
    E, H, I, TOPK, dev = a.experts, 2880, 2880, 4, "cuda"
    layers = make_layers(E, H, I)
    b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
    wr, br = torch.randn(E, H, device=dev, dtype=torch.float16), torch.randn(E, device=dev, dtype=torch.bfloat16)
    configs = [tuple(map(int, t.split(","))) for t in a.tiles] if a.tiles else \
        list(itertools.product([64, 128], [4, 8], [3, 4, 6]))
    tiles = configs[0] if a.tiles else None  # for the split timings
    for T in a.tokens:
        x = torch.randn(T, H, device=dev, dtype=torch.float16)  # the engine's MoE input in bf16 mode
        block_m = a.block_m or (16 if T * TOPK <= 16 * E else 64 if T * TOPK <= 128 * E else 128)  # as ops.moe
        table, order, rw = K.moe_route(x, wr, br, TOPK, block_m)
        experts = len(set(table[0].tolist()) - {-1})
        (w1, s1), (w2, s2) = layers[0]
        nbytes1 = experts * (w1[0].numel() * 4 + s1[0].numel())
        nbytes2 = experts * (w2[0].numel() * 4 + s2[0].numel())
        splits = K.down_splits(T, table.shape[1], H, I, x.device, block_m)[0]
        act = torch.empty(T * TOPK, I, device=dev, dtype=x.dtype)
        out = torch.empty(T * TOPK * splits, H, device=dev)
        if a.up_splits:
            up = K.k_splits(table.shape[1] * triton.cdiv(2 * I, 128), x.device, 2)  # as model/ops.moe caps it
            times = [graph_us(lambda l: K._moe_gemm(x, *layers[l][0], b1, act, table, order, rw, TOPK, True, 7.0,
                                                    block_m, 2 * I, tiles, splits=sp)) for sp in a.up_splits]
            print(f"T={T}: {experts} experts, engine gate_up split {up}; gate_up us at splits {a.up_splits}: "
                  + " ".join(f"{t:.1f}" for t in times), flush=True)
        if a.down_splits:
            times = []
            for sp in a.down_splits:
                o = torch.empty(T * TOPK * sp, H, device=dev)
                times.append(graph_us(lambda l: K._moe_gemm(act, *layers[l][1], b2, o, table, order, rw, TOPK, False,
                                                            7.0, block_m, H, tiles, splits=sp)))
            print(f"T={T}: {experts} experts, engine split {splits}; down us at splits {a.down_splits}: "
                  + " ".join(f"{t:.1f}" for t in times), flush=True)
        if a.chain:
            wrs = [wr.clone() for _ in layers]
            for w in wrs[1:]:  # each layer routes differently, as the model's do
                w.normal_()
            cnt = torch.zeros(4096, device=dev, dtype=torch.int32)  # the engine's static split counters
            h, nw = torch.zeros(T, H, device=dev, dtype=torch.bfloat16), torch.ones(H, device=dev)  # [T, H] residual
            rule = K.down_splits
            for sp in a.down_splits or [0]:  # 0: the engine's rule; else every down at sp K splits, its tiles kept
                K.down_splits = (lambda *r, sp=sp, **kw: (sp, rule(*r, **kw)[1])) if sp else rule
                t = graph_us(lambda l: K.add_rmsnorm(h, nw, 1e-5, K.moe(x, wrs[l], br, *layers[l][0], b1,
                                                                        *layers[l][1], b2, TOPK, 7.0, counters=cnt)))
                print(f"T={T}: {experts} experts; route + gate_up + down{f' at {sp} splits' if sp else ''} + "
                      f"add_rmsnorm {t:.1f} us per layer", flush=True)
            K.down_splits = rule
        if a.up_splits or a.down_splits or a.chain:
            continue
        res = []
        for cfg in configs:
            f1 = lambda l: K._moe_gemm(x, *layers[l][0], b1, act, table, order, rw, TOPK, True, 7.0, block_m, 2 * I,
                                       tiles=cfg)
            f2 = lambda l: K._moe_gemm(act, *layers[l][1], b2, out, table, order, rw, TOPK, False, 7.0, block_m, H,
                                       tiles=cfg, splits=splits)
            try:
                t1, t2 = graph_us(f1), graph_us(f2)
            except Exception as e:  # a config that does not compile or fit
                print(f"T={T} {cfg}: {type(e).__name__}")
                continue
            res.append((t1 + t2, t1, t2, cfg))
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(dict(E=E, T=T, block_m=block_m, experts=experts, splits=splits, cfg=cfg,
                                            gate_up_us=t1, down_us=t2, gate_up_bytes=nbytes1,
                                            down_bytes=nbytes2)) + "\n")
        res.sort()
        print(f"== E={E} T={T}: {experts} experts touched, down split {splits}; gate_up {nbytes1 / 1e6:.1f} MB, "
              f"down {nbytes2 / 1e6:.1f} MB")
        best1, best2 = min(res, key=lambda r: r[1]), min(res, key=lambda r: r[2])
        print(f"  best gate_up {best1[3]} {best1[1]:.1f} us, best down {best2[3]} {best2[2]:.1f} us")
        for tot, t1, t2, cfg in res[:4] + res[-1:]:
            print(f"  (BN, warps, stages)={cfg}: gate_up {t1:6.1f} us {nbytes1 / t1 / 1e3:5.0f} GB/s | "
                  f"down {t2:6.1f} us {nbytes2 / t2 / 1e3:5.0f} GB/s | both {tot:6.1f} us", flush=True)


if __name__ == "__main__":
    main()
