"""The MoE routing alone (ops.moe_route: router GEMV, top-k, tile table), us per layer in a CUDA graph of 24 layers
with distinct router weights, random activations (so near-uniform routing). A benchmark, not a test.

    python cookbook/bench_route.py                    # this tree
    python cookbook/bench_route.py <other tree> old   # another checkout's model/ and kernels.py, for an A/B
"""
import sys
from pathlib import Path

ROOT = sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).resolve().parents[1])
sys.path.insert(0, ROOT)
sys.path.insert(1, str(Path(__file__).resolve().parent))
import torch  # noqa: E402
from common import graph_us  # noqa: E402
from model import ops  # noqa: E402

res = {}
for E in [32, 128]:  # 20b, 120b
    wrs = [torch.randn(E, 2880, device="cuda", dtype=torch.bfloat16) for _ in range(24)]
    br = torch.randn(E, device="cuda", dtype=torch.bfloat16)
    for T in [1, 8, 64, 256]:
        x = torch.randn(T, 2880, device="cuda", dtype=torch.bfloat16)
        bm = 16 if 4 * T <= 16 * E else 64  # as ops.moe picks its tile rows
        res[f"E{E}_T{T}"] = graph_us([lambda wr=wr: ops.moe_route(x, wr, br, 4, bm) for wr in wrs])
print(sys.argv[2] if len(sys.argv) > 2 else "this", " ".join(f"{k} {v:.2f}" for k, v in res.items()), flush=True)
