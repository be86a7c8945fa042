"""Benchmark (not a test): the dense projections of gpt-oss-20b at 160-256 tokens, where the engine calls cuBLAS
(ops.linear: F.linear above `upto` tokens), against the engine's own split-K `_linear_kernel` (ops.linear_partials)
at larger tiles. 24 layer copies in one CUDA graph (common.graph_us), us a call and achieved TB/s of the weights.
At 256 tokens these GEMMs sit near the ridge point (256 flops a weight byte): in the fifty-first session's b256
profile (H100, docs/runs/s51/profile_20b_random.json) cuBLAS's two per-layer GEMMs took 16.9 and 16.7 us a layer,
for QKV's 29.5 MB and O's 23.6 MB of weights (8-11 us each at the GEMV probe's 2.8 TB/s).
The split forms leave [T, S, N] partials that add_rmsnorm (O) or rope_kv (QKV) sum in the engine; here they are
timed alone, and a split's extra partial bytes (T x S x N x 2) are only printed beside its time.

    python cookbook/dense_variants/dense256.py --tokens 160 256                  # GPU
    TRITON_INTERPRET=1 python cookbook/dense_variants/dense256.py --check        # CPU: the sums agree with F.linear
"""
import argparse
import itertools
import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model import ops  # noqa: E402

SHAPES = {"o": (2880, 4096), "qkv": (5120, 2880)}  # (N, K) at 20b
CONFIGS = list(itertools.product([1, 2, 4], [64, 128], [64, 128], [3, 4]))  # splits, block_n, block_t, stages


def run(x, w, b, cfg):
    splits, block_n, block_t, stages = cfg
    return ops.linear_partials(x, w, b, splits, block_n, 64, stages, block_t=block_t, dtype=x.dtype)


def check():
    torch.manual_seed(0)
    for T, (N, K) in [(70, (96, 320)), (130, (200, 256))]:
        x, w, b = torch.randn(T, K), torch.randn(N, K), torch.randn(N)
        ref = F.linear(x.double(), w.double(), b.double())
        for cfg in [(1, 64, 64, 3), (2, 128, 128, 4), (4, 64, 128, 3)]:
            y = run(x, w, b, cfg).double().sum(1)  # [T, N]
            err = ((y - ref).norm() / ref.norm()).item()
            assert err < 1e-5, (T, N, K, cfg, err)
            print(f"T={T} N={N} K={K} {cfg}: rel err {err:.1e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", nargs="+", type=int, default=[160, 256])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check or os.environ.get("TRITON_INTERPRET") == "1":
        return check()
    from common import graph_us
    for (name, (N, K)), T in itertools.product(SHAPES.items(), a.tokens):
        ws = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(24)]
        b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
        wbytes = N * K * 2
        t = graph_us([lambda w=w: F.linear(x, w, b) for w in ws])
        print(f"{name} T={T}: cuBLAS {t:6.2f} us ({wbytes / t / 1e6:.2f} TB/s)", flush=True)
        res = []
        for cfg in CONFIGS:
            try:
                res.append((graph_us([lambda w=w: run(x, w, b, cfg) for w in ws]), cfg))
            except Exception as e:  # a tile that does not fit
                print(f"  {cfg}: {type(e).__name__}")
        for t, cfg in sorted(res)[:6]:
            print(f"  (splits, block_n, block_t, stages)={cfg}: {t:6.2f} us ({wbytes / t / 1e6:.2f} TB/s, "
                  f"+{T * cfg[0] * N * 2 / 1e6:.1f} MB of partials)", flush=True)


if __name__ == "__main__":
    main()
