# s26: the down at one token reading the gate_up's fp32 partials (XS=2) vs bf16 activations, by tile config
import sys, torch, triton
sys.path[:0] = [".", "cookbook"]  # run from the repo root with the patch applied
from bench_moe import graph_us, make_layers
from model import ops as K
E, H, I, TOPK, dev = 32, 2880, 2880, 4, "cuda"
layers = make_layers(E, H, I)
b1, b2 = torch.randn(E, 2 * I, device=dev), torch.randn(E, H, device=dev)
wr, br = torch.randn(E, H, device=dev, dtype=torch.bfloat16), torch.randn(E, device=dev, dtype=torch.bfloat16)
for T in [1, 2]:
    x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
    table, order, rw = K.moe_route(x, wr, br, TOPK, 16)
    act1 = torch.randn(T * TOPK, I, device=dev, dtype=torch.bfloat16)
    act2 = torch.randn(2, T * TOPK, 2 * I, device=dev)
    for sp in (1, 2):
        o = act2 if sp > 1 else act1
        t = graph_us(lambda l: K._moe_gemm(x, *layers[l][0], b1, o, table, order, rw, TOPK, True, 7.0, 16, 2 * I, None, splits=sp))
        print(f"T={T} gate_up splits {sp}: {t:.1f} us", flush=True)
    for tiles in [(256, 4, 3), (128, 4, 3), (256, 8, 3), (256, 4, 2)]:
        for name, a in (("bf16", act1), ("xs2", act2)):
            out = torch.empty(T * TOPK * 8, H, device=dev, dtype=torch.bfloat16)
            try:
                t = graph_us(lambda l: K._moe_gemm(a, *layers[l][1], b2, out, table, order, rw, TOPK, False, 7.0, 16, H, tiles, 8))
            except Exception as e:
                t = float("nan"); print(type(e).__name__, e)
            print(f"T={T} down {tiles} x {name}: {t:.1f} us", flush=True)
for T in [1, 8]:
    x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
    t = graph_us(lambda l: K.moe(x, wr, br, *layers[l][0], b1, *layers[l][1], b2, TOPK, 7.0))
    print(f"T={T} chain (route + gate_up + down) {t:.1f} us", flush=True)
