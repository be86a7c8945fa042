"""Fifty-second session: _tiles_kernel alone at the b64 and b256 decode sizes (20b: 32 experts, top-4) by BLOCK and
num_warps, 24 launches in one CUDA graph (common.graph_us). Run from the repository root on the device."""
import sys
import torch, triton
sys.path.insert(0, "."); sys.path.insert(0, "cookbook")
import common
import kernels as KK
E, dev = 32, "cuda"
for T, block_m in [(64, 16), (256, 64)]:
    A = T * 4
    ids = [torch.randint(0, E, (A,), device=dev, dtype=torch.int32) for _ in range(24)]
    n_tiles = min(triton.cdiv(A, block_m) + E, A)
    table = torch.empty((3, triton.cdiv(n_tiles, 16) * 16), device=dev, dtype=torch.int32)
    order = torch.empty(A, device=dev, dtype=torch.int32)
    ref = None
    for block in [b for b in (1024, 512, 256, 128) if b <= triton.next_power_of_2(A)]:
        for warps in (4, 8, 16):
            f = [lambda i=i: KK._tiles_kernel[(triton.cdiv(A, block),)](ids[i], order, table, A, table.shape[1],
                 table.stride(0), EP=E, BLOCK_M=block_m, BLOCK=block, num_warps=warps) for i in range(24)]
            f[0](); torch.cuda.synchronize()
            got = (order.clone(), table.clone())
            ref = ref or got
            same = torch.equal(ref[0], got[0]) and torch.equal(ref[1], got[1])
            print(f"T={T} A={A} BLOCK={block:4d} programs={triton.cdiv(A, block)} warps={warps:2d}: "
                  f"{common.graph_us(f):6.2f} us a launch, same table: {same}", flush=True)
