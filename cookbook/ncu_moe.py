"""Nsight Compute target for the MXFP4 MoE kernel at 20b shapes (a profiling harness, not a benchmark): one
routed MoE per layer copy, eager, so each launch is its own kernel for ncu. Launch order per call: router,
top-k, tile table, gate_up, down; calls 0-7 warm up (compile), so skip 2 x 8 _moe_kernel launches:

    ncu --kernel-name regex:_moe_kernel --launch-skip 16 --launch-count 2 --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
        python cookbook/ncu_moe.py --tokens 1
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_moe import LAYERS, make_layers  # noqa: E402
from model import ops  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--tokens", type=int, default=1)
ap.add_argument("--experts", type=int, default=32)
a = ap.parse_args()
E, H, I, dev = a.experts, 2880, 2880, "cuda"
layers = make_layers(E, H, I)
b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
# fp16 x and router, as the engine runs them in bf16 mode (model/weights.prepare_layer)
wr, br = torch.randn(E, H, device=dev, dtype=torch.float16), torch.randn(E, device=dev, dtype=torch.bfloat16)
x = torch.randn(a.tokens, H, device=dev, dtype=torch.float16)
for rep in range(3):
    for (w1, s1), (w2, s2) in layers:
        ops.moe(x, wr, br, w1, s1, b1, w2, s2, b2, 4, 7.0)
torch.cuda.synchronize()
print(f"ok: {3 * LAYERS} MoE calls at {a.tokens} tokens, {E} experts")
