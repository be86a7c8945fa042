# s26: one launch each of the one-token down reading bf16 activations, then the gate_up's fp32 partials (XS=2)
import sys, torch
sys.path[:0] = [".", "cookbook"]  # run from the repo root with the patch applied
from bench_moe import make_layers
from model import ops as K
E, H, I, TOPK, dev = 32, 2880, 2880, 4, "cuda"
(w1, s1), (w2, s2) = make_layers(E, H, I)[0]
b2 = torch.randn(E, H, device=dev)
wr, br = torch.randn(E, H, device=dev, dtype=torch.bfloat16), torch.randn(E, device=dev, dtype=torch.bfloat16)
x = torch.randn(1, H, device=dev, dtype=torch.bfloat16)
table, order, rw = K.moe_route(x, wr, br, TOPK, 16)
act1 = torch.randn(TOPK, I, device=dev, dtype=torch.bfloat16)
act2 = torch.randn(2, TOPK, 2 * I, device=dev)
out = torch.empty(TOPK * 8, H, device=dev, dtype=torch.bfloat16)
for a in (act1, act2, act1, act2):
    K._moe_gemm(a, w2, s2, b2, out, table, order, rw, TOPK, False, 7.0, 16, H, (256, 4, 3), 8)
torch.cuda.synchronize()
print("table", table[:, :6].tolist())
