"""Checkpoint I/O: the official Hugging Face layout (config.json + MXFP4 safetensors), random
weights of the real shapes (load_format="dummy"), and the writer of tiny random checkpoints.

Legend: L layers, H hidden, I intermediate, E experts, V vocab, NH/NKV heads, D head dim, e up to 8 experts.
Expert weights stay 4-bit: the only change at load is the order of the codes (pack_experts), into contiguous 64 x 64
tiles that the MoE kernel decodes with a few word-wide bit operations."""
import json
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from .config import GptOssConfig

LAYER_NAMES = ("input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.q_proj.bias",
               "self_attn.k_proj.weight", "self_attn.k_proj.bias", "self_attn.v_proj.weight",
               "self_attn.v_proj.bias", "self_attn.o_proj.weight", "self_attn.o_proj.bias", "self_attn.sinks",
               "post_attention_layernorm.weight", "mlp.router.weight", "mlp.router.bias",
               "mlp.experts.gate_up_proj_blocks", "mlp.experts.gate_up_proj_scales", "mlp.experts.gate_up_proj_bias",
               "mlp.experts.down_proj_blocks", "mlp.experts.down_proj_scales", "mlp.experts.down_proj_bias")


def tensor_shapes(cfg: GptOssConfig, layer=None):
    """HF name -> (shape, dtype) for one layer's tensors (layer=l) or the global ones (layer=None)."""
    H, I, E, D = cfg.hidden_size, cfg.intermediate_size, cfg.num_local_experts, cfg.head_dim
    q, kv, bf, u8 = cfg.num_attention_heads * D, cfg.num_key_value_heads * D, torch.bfloat16, torch.uint8
    if layer is None:
        return {"model.embed_tokens.weight": ((cfg.vocab_size, H), bf), "model.norm.weight": ((H,), bf),
                "lm_head.weight": ((cfg.vocab_size, H), bf)}
    shapes = [(H,), (q, H), (q,), (kv, H), (kv,), (kv, H), (kv,), (H, q), (H,), (cfg.num_attention_heads,),
              (H,), (E, H), (E,), (E, 2 * I, H // 32, 16), (E, 2 * I, H // 32), (E, 2 * I),
              (E, H, I // 32, 16), (E, H, I // 32), (E, H)]
    return {f"model.layers.{layer}.{n}": (s, u8 if "blocks" in n or "scales" in n else bf)
            for n, s in zip(LAYER_NAMES, shapes)}


def random_tensor(name, shape, dtype, gen, device, lm_std=0.02):
    """Realistic scales: linear weights std 0.02, MXFP4 codes uniform with scale 2^-7 (std ~0.02
    after dequantization), sinks ~N(0, 1), norm weights ~1."""
    if dtype == torch.uint8:
        lo, hi = (0, 256) if name.endswith("blocks") else (119, 121)  # any code pair; scales 2^-8 or 2^-7
        return torch.randint(lo, hi, shape, generator=gen, device=device, dtype=torch.uint8)
    x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    if "norm" in name:
        x = 1.0 + 0.1 * x
    elif not name.endswith("sinks"):
        x = x * (lm_std if name == "lm_head.weight" else 0.02)
    return x.to(dtype)


def write_checkpoint(path, cfg: GptOssConfig, seed=0, shards=2, lm_std=0.3):
    """Write a random checkpoint in the official layout: config.json, zero-based shards
    model-0000i-of-0000{n-1}.safetensors and model.safetensors.index.json (weight_map)."""
    (path := Path(path)).mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(seed)
    groups = [tensor_shapes(cfg)] + [tensor_shapes(cfg, l) for l in range(cfg.num_hidden_layers)]
    per = -(-len(groups) // shards)
    weight_map, total = {}, 0
    for s in range(shards):
        fname = f"model-{s:05d}-of-{shards - 1:05d}.safetensors"
        tensors = {n: random_tensor(n, shape, dt, gen, "cpu", lm_std)
                   for g in groups[s * per:(s + 1) * per] for n, (shape, dt) in g.items()}
        save_file(tensors, str(path / fname), metadata={"format": "pt"})
        weight_map.update({n: fname for n in tensors})
        total += sum(t.numel() * t.element_size() for t in tensors.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (path / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    (path / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2))
    return path


class SafetensorsReader:
    """Finds each tensor through model.safetensors.index.json, or in a single model.safetensors."""

    def __init__(self, path):
        path = Path(path)
        index = path / "model.safetensors.index.json"
        if index.exists():
            self.files = {n: path / f for n, f in json.loads(index.read_text())["weight_map"].items()}
        elif (path / "model.safetensors").exists():
            with safe_open(path / "model.safetensors", framework="pt") as f:
                self.files = {n: path / "model.safetensors" for n in f.keys()}
        else:
            raise FileNotFoundError(f"{path}: no model.safetensors.index.json or model.safetensors")
        self.handles = {}

    def get(self, name, shape, dtype, device):
        if name not in self.files:
            raise KeyError(f"checkpoint has no tensor {name!r}")
        f = self.files[name]
        if f not in self.handles:
            self.handles[f] = safe_open(f, framework="pt")
        t = self.handles[f].get_tensor(name)
        if tuple(t.shape) != tuple(shape) or t.dtype != dtype:
            raise ValueError(f"{name}: checkpoint has {tuple(t.shape)} {t.dtype}, config needs {tuple(shape)} {dtype}")
        return t.to(device)


# Where each E2M1 code of a 32-bit word goes: four pair slots, one per 2 features, each with (bit of the 3
# exponent/mantissa bits, sign bit) in both 16-bit halves, placed so kernels._fp4x8 moves each slot to fp16 bits
# 9-11, 15 in 1-3 ops: slot 0 stays, slot 1 is one shift, slots 2 and 3 one carry-free multiply each.
SLOTS = [(9, 15), (6, 12), (3, 13), (0, 14)]


def pack_experts(blocks, scales):
    """[E, N, K/32, 16] checkpoint blocks (byte j: code of feature 2j low, 2j+1 high) + [E, N, K/32] scales ->
    words [E, N/64, KT, 64, 8] int32 and scales [E, N/64, KT + 1, 64, 2] uint8, KT = ceil(K/64): every 64 x 64
    tile of the weight is 2 KB in a row, and within a 32-feature group word w's slot i, half h holds feature
    8i + 2w + h. Only the order of the 4-bit codes changes; rows and an odd last group are padded with zeros.
    The kernel multiplies codes by scales in fp16, exact for factors 2^-23..2^1 and no wider, so each row's
    scales are shifted to put its largest at 2^1: B = max_g s - 128, kept (+127) in the extra tile KT for the
    fp32 epilogue. gpt-oss-120b's down projections have scales far above 2^1, small layers far below; groups
    more than 24 binades under their row's largest lose their smallest codes to fp16 underflow."""
    E, N, G, _ = blocks.shape
    n, kt, w = -(-N // 64), -(-G // 2), torch.arange(4, device=blocks.device)
    out = blocks.new_empty(E, n, kt, 64, 8, dtype=torch.int32), blocks.new_empty(E, n, kt + 1, 64, 2)
    for c in (slice(e, e + 8) for e in range(0, E, 8)):  # 8 experts at a time: a whole 120b layer's 6 GiB
        b = torch.nn.functional.pad(blocks[c], (0, 0, 0, 2 * kt - G, 0, 64 * n - N))  # temporaries: 4.6 GiB of holes
        s = torch.nn.functional.pad(scales[c], (0, 2 * kt - G, 0, 64 * n - N)).to(torch.int32)  # [e, N', G']
        excess = (s.amax(-1, keepdim=True) - 128).clamp(min=-126)  # [e, N', 1]: 2^B a normal fp32; pads never a max
        s = (s - excess).clamp(min=0)  # s < B only > 128 binades under the row's largest: 0 in fp16 anyway
        nib = torch.stack([b & 15, b >> 4], -1).flatten(-2)  # [e, N', G', 32] codes in feature order
        words = torch.zeros(*b.shape[:-1], 4, dtype=torch.int32, device=b.device)  # [e, N', G', 4]
        for i, (m0, s0) in enumerate(SLOTS):
            for h in range(2):
                code = nib[..., 8 * i + 2 * w + h].to(torch.int32)  # [e, N', G', 4]
                words |= ((code & 7) << (m0 + 16 * h)) | ((code >> 3) << (s0 + 16 * h))
        s = torch.cat([s, excess + 127, torch.zeros_like(excess)], -1).to(torch.uint8)  # [e, N', G' + 2]
        out[0][c] = words.view(-1, n, 64, kt, 8).transpose(2, 3)  # [e, N/64, KT, 64, 8]
        out[1][c] = s.view(-1, n, 64, kt + 1, 2).transpose(2, 3)  # [e, N/64, KT + 1, 64, 2]
    return out


def prepare_layer(t: dict, dtype):
    """HF tensors of one layer (short names) -> the engine's layout. Returns a dict of device tensors."""
    w1, s1 = pack_experts(t["mlp.experts.gate_up_proj_blocks"], t["mlp.experts.gate_up_proj_scales"])
    w2, s2 = pack_experts(t["mlp.experts.down_proj_blocks"], t["mlp.experts.down_proj_scales"])
    cat = lambda kind: torch.cat([t[f"self_attn.{p}_proj.{kind}"] for p in "qkv"]).to(dtype)
    mx = torch.float16 if dtype == torch.bfloat16 else dtype  # bf16 mode: the MoE's input and router (ops.moe)
    return dict(ln1=t["input_layernorm.weight"].to(dtype), wqkv=cat("weight"), bqkv=cat("bias"),
                sinks=t["self_attn.sinks"].float(), wo=t["self_attn.o_proj.weight"].to(dtype),
                bo=t["self_attn.o_proj.bias"].to(dtype), ln2=t["post_attention_layernorm.weight"].to(dtype),
                wr=t["mlp.router.weight"].to(mx), br=t["mlp.router.bias"].to(dtype),
                w1=w1, s1=s1, b1=t["mlp.experts.gate_up_proj_bias"].float(),
                w2=w2, s2=s2, b2=t["mlp.experts.down_proj_bias"].float())


def load_weights(path, cfg: GptOssConfig, device, dtype, dummy=False, seed=0, progress=None):
    """Returns (globals dict, list of per-layer dicts). dummy=True draws random tensors on the device."""
    gen = torch.Generator(device=device).manual_seed(seed) if dummy else None
    reader = None if dummy else SafetensorsReader(path)

    def fetch(shapes):
        return {n: random_tensor(n, s, dt, gen, device) if dummy else reader.get(n, s, dt, device)
                for n, (s, dt) in shapes.items()}

    layers = [prepare_layer({n.split(".", 3)[3]: x for n, x in fetch(tensor_shapes(cfg, l)).items()}, dtype)
              for l in (progress or (lambda x: x))(range(cfg.num_hidden_layers))]  # names after "model.layers.l."
    g = fetch(tensor_shapes(cfg))
    glob = dict(embed=g["model.embed_tokens.weight"].to(dtype), norm=g["model.norm.weight"].to(dtype),
                lm_head=g["lm_head.weight"].to(dtype))
    return glob, layers
