"""Fifty-second session: _tiles_kernel alone by BLOCK (4 warps) at decode and prefill sizes, 20b and 120b, 24 launches
in one CUDA graph (common.graph_us). Run from the repository root on the device."""
import sys
import torch, triton
sys.path.insert(0, "."); sys.path.insert(0, "cookbook")
import common
import kernels as KK
dev = "cuda"
for T, E in [(256, 32), (160, 32), (256, 128), (512, 128), (1024, 32), (8192, 32), (8192, 128)]:
    A = T * 4
    block_m = 16 if A <= 16 * E else 64 if A <= 128 * E else 128
    EP = max(16, triton.next_power_of_2(E))
    ids = [torch.randint(0, E, (A,), device=dev, dtype=torch.int32) for _ in range(24)]
    n_tiles = min(triton.cdiv(A, block_m) + E, A)
    table = torch.empty((3, triton.cdiv(n_tiles, 16) * 16), device=dev, dtype=torch.int32)
    order = torch.empty(A, device=dev, dtype=torch.int32)
    ref, res = None, []
    for block in [b for b in (1024, 512, 256) if b <= max(256, triton.next_power_of_2(A))]:
        f = [lambda i=i: KK._tiles_kernel[(triton.cdiv(A, block),)](ids[i], order, table, A, table.shape[1],
             table.stride(0), EP=EP, BLOCK_M=block_m, BLOCK=block) for i in range(24)]
        f[0](); torch.cuda.synchronize()
        got = (order.clone(), table[:, :n_tiles].clone())
        ref = ref or got
        same = torch.equal(ref[0], got[0]) and torch.equal(ref[1], got[1])
        res.append(f"BLOCK {block}: {common.graph_us(f):6.2f} us{'' if same else ' DIFFERS'}")
    print(f"T={T} E={E} A={A} block_m={block_m}: " + " | ".join(res), flush=True)
