"""What one kernel boundary costs a decode step (benchmark, not a test): a chain of LAUNCHES tiny kernels in one CUDA
graph, each reading what the one before wrote (as a batch-1 step's ~220 launches do), with and without programmatic
dependent launch, at 1 to 396 programs. Per launch time = graph time / LAUNCHES: the floor a kernel pays on the
step's chain for its launch, its wait and its first and last memory round trips, with no work in between.

    python cookbook/bench_boundary.py
"""
import argparse
import json

import torch
import triton
import triton.language as tl

import common
import kernels as KK


@triton.jit
def _hop_kernel(src_ptr, dst_ptr, BLOCK: tl.constexpr, PDL: tl.constexpr):
    KK._pdl(PDL)
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + o, tl.load(src_ptr + o) + 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--programs", nargs="+", type=int, default=[1, 12, 132, 396])
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for programs in a.programs:
        bufs = [torch.zeros(programs * 128, device="cuda") for _ in range(2)]
        for pdl in (False, True):
            fns = [lambda i=i: _hop_kernel[(programs,)](bufs[i % 2], bufs[1 - i % 2], BLOCK=128, PDL=pdl,
                                                        launch_pdl=pdl) for i in range(a.launches)]
            us = common.graph_us(fns)
            rows.append(dict(programs=programs, pdl=pdl, us_per_launch=us, gpu=torch.cuda.get_device_name()))
            print(f"{programs:4d} programs, PDL {pdl!s:5}: {us:.2f} us a launch", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
