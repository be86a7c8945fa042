"""Fifty-second session: the 20b MoE at 256 tokens with the engine's own routing (ids256.json from tilestats256.py:
8 layers of one decode step), gate_up and down timed per layer in one CUDA graph over 8 layer copies
(cookbook/bench_moe.py's method) for tile rows (block_m) x (BLOCK_N, warps, stages). Run from the repository root."""
import json, os, sys
from pathlib import Path
import torch, triton
sys.path.insert(0, "."); sys.path.insert(0, "cookbook")
import kernels as KK
from model import ops
from bench_moe import make_layers, graph_us, LAYERS
E, H, I, TOPK, T, dev = 32, 2880, 2880, 4, 256, "cuda"
calls = json.load(open(sys.argv[1]))[:LAYERS]
layers = make_layers(E, H, I)
b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
x = torch.randn(T, H, device=dev, dtype=torch.float16)
rw = torch.full((T * TOPK,), 0.25, device=dev)

def route(ids, block_m):  # ops.moe_route's tail from given expert ids [A]
    A = ids.numel()
    n_tiles = min(triton.cdiv(A, block_m) + E, A)
    table = torch.empty((3, triton.cdiv(n_tiles, 16) * 16), device=dev, dtype=torch.int32)
    order = torch.empty(A, device=dev, dtype=torch.int32)
    KK._tiles_kernel[(1,)](ids, order, table, A, table.shape[1], table.stride(0), EP=E, BLOCK_M=block_m, BLOCK=1024)
    return table[:, :n_tiles], order

if sys.argv[2:] == ["ncu"]:  # eager launches for Nsight Compute: engine tiles (64 rows), the b256 config
    routes = [route(torch.tensor(c, device=dev, dtype=torch.int32), 64) for c in calls]
    act = torch.empty(T * TOPK, I, device=dev, dtype=x.dtype)
    splits, dt = ops.down_splits(T, routes[0][0].shape[1], H, I, x.device)
    out = torch.empty(T * TOPK * splits, H, device=dev, dtype=torch.bfloat16)
    for rep in range(3):
        for l in range(LAYERS):
            ops._moe_gemm(x, *layers[l][0], b1, act, routes[l][0], routes[l][1], rw, TOPK, True, 7.0, 64, 2 * I)
            ops._moe_gemm(act, *layers[l][1], b2, out, routes[l][0], routes[l][1], rw, TOPK, False, 7.0, 64, H, dt,
                          splits)
    torch.cuda.synchronize(); print("ncu run done", splits, [int((t[0] >= 0).sum()) for t, _ in routes]); sys.exit()
out_f = Path(os.environ.get("OUT", "."), "moe256.jsonl")
variants = [(64, None), (64, (256, 8, 3)), (64, (128, 4, 3)), (32, (256, 4, 3)), (32, (128, 4, 3)),
            (128, (256, 8, 3)), (128, (256, 4, 3)), (16, (256, 4, 3))]
for block_m, tiles in variants:
    routes = [route(torch.tensor(c, device=dev, dtype=torch.int32), block_m) for c in calls]
    used = sum(int((t[0] >= 0).sum()) for t, _ in routes) / LAYERS
    splits, dt = ops.down_splits(T, routes[0][0].shape[1], H, I, x.device)
    act = torch.empty(T * TOPK, I, device=dev, dtype=x.dtype)
    out = torch.empty(T * TOPK * splits, H, device=dev, dtype=torch.bfloat16)
    def up(l):
        ops._moe_gemm(x, *layers[l][0], b1, act, routes[l][0], routes[l][1], rw, TOPK, True, 7.0, block_m, 2 * I, tiles)
    def down(l):
        ops._moe_gemm(act, *layers[l][1], b2, out, routes[l][0], routes[l][1], rw, TOPK, False, 7.0, block_m, H,
                      tiles or dt, splits)
    try:
        t1, t2 = graph_us(up), graph_us(down)
    except Exception as e:
        print(f"block_m {block_m} {tiles}: {type(e).__name__} {str(e)[:200]}", flush=True); continue
    r = dict(block_m=block_m, tiles=tiles, tiles_used=used, down_splits=splits, gate_up_us=t1, down_us=t2)
    print(f"block_m {block_m:3d} tiles {str(tiles):14s} used tiles {used:5.1f} | gate_up {t1:6.1f} down {t2:6.1f} "
          f"both {t1 + t2:6.1f} us", flush=True)
    with open(out_f, "a") as f:
        f.write(json.dumps(r) + "\n")
