"""Device: model/ops.moe against moe_splitk.moe and moe_splitk2.moe (gate_up split-K, two ways) at 20b / 120b
shapes and small batch, each
timed inside a CUDA graph over 8 copies of the experts (cookbook/bench_moe.py's method), routing included.
python cookbook/moe_variants/bench_splitk.py"""
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "cookbook"), str(Path(__file__).resolve().parent)]
from bench_moe import graph_us, make_layers  # noqa: E402
from model import ops  # noqa: E402
from moe_splitk import moe as moe_splitk  # noqa: E402
from moe_splitk2 import moe as moe_splitk2  # noqa: E402

dev, H, I = "cuda", 2880, 2880
for E in [32, 128]:
    layers = make_layers(E)
    b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
    wr, br = torch.randn(E, H, device=dev, dtype=torch.bfloat16), torch.randn(E, device=dev, dtype=torch.bfloat16)
    for T in [1, 2, 4, 8]:
        x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
        run = lambda l: ops.moe(x, wr, br, layers[l][0][0], layers[l][0][1], b1, *layers[l][1], b2, 4, 7.0)
        ref, base = run(0).sum(1), graph_us(run)
        line = f"E {E:3d} T {T}: engine {base:6.1f} us"
        for name, fn in [("splitk", moe_splitk), ("splitk2", moe_splitk2)]:
            line += f"\n  {name:8s}"
            for S in [2, 3, 4, 6]:
                f = lambda l: fn(x, wr, br, layers[l][0][0], layers[l][0][1], b1, *layers[l][1], b2, 4, 7.0, S)
                err = ((f(0).sum(1) - ref).norm() / ref.norm()).item()
                line += f" | S={S} {graph_us(f):6.1f} us (err {err:.0e})"
        print(line, flush=True)
    del layers
