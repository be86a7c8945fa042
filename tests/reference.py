"""Plain float32 PyTorch reference of gpt-oss, written from shared/CHECKPOINT_FORMAT.md (sections 2-4).

Deliberately simple and independent of the engine: dense, no KV cache, no fused kernels.
"""
import math

import torch

# FP4 E2M1 codes 0..15 (bit 3 = sign; code 8 is -0 and decodes to 0).
FP4_VALUES = [+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0,
              -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def mxfp4_dequant(blocks: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """blocks uint8 [..., out, G, 16], scales uint8 [..., out, G] -> float32 [..., out, G*32]."""
    table = torch.tensor(FP4_VALUES, dtype=torch.float32, device=blocks.device)
    b = blocks.to(torch.int64)
    lo, hi = b & 0x0F, b >> 4                                   # [..., out, G, 16] each
    codes = torch.stack([lo, hi], dim=-1).flatten(-2)           # [..., out, G, 32]: 2j -> lo, 2j+1 -> hi
    vals = table[codes] + 0.0                                   # -0 -> +0
    factor = torch.exp2(scales.to(torch.float32) - 127.0)       # [..., out, G]
    return (vals * factor.unsqueeze(-1)).flatten(-2)            # [..., out, K]


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    x = x.float()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w.float()


def yarn_low_high(head_dim: int, theta: float = 150000.0, beta_fast: float = 32.0,
                  beta_slow: float = 1.0, original_max_pos: int = 4096):
    """Un-truncated YaRN correction dims (low from beta_fast, high from beta_slow)."""
    def corr(n_rot):
        return (head_dim / 2) * math.log(original_max_pos / (n_rot * 2 * math.pi)) / math.log(theta)
    return corr(beta_fast), corr(beta_slow)


def yarn_inv_freq_and_scale(head_dim: int, theta: float = 150000.0, factor: float = 32.0,
                            beta_fast: float = 32.0, beta_slow: float = 1.0,
                            original_max_pos: int = 4096):
    """-> (inv_freq float32 [head_dim/2], concentration float)."""
    i = torch.arange(head_dim // 2, dtype=torch.float64)
    inv_extra = theta ** (-2.0 * i / head_dim)                  # [hd/2]
    inv_inter = inv_extra / factor
    low, high = yarn_low_high(head_dim, theta, beta_fast, beta_slow, original_max_pos)
    if high == low:
        high += 1e-3
    ramp = ((i - low) / (high - low)).clamp(0.0, 1.0)           # 0 -> extrapolate, 1 -> interpolate
    inv_freq = inv_inter * ramp + inv_extra * (1.0 - ramp)
    concentration = 0.1 * math.log(factor) + 1.0
    return inv_freq.to(torch.float32), concentration


def rope(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor,
         concentration: float) -> torch.Tensor:
    """x [T, nheads, hd]; NeoX halves: dims i and i+hd/2 are a pair."""
    ang = positions.to(torch.float32)[:, None] * inv_freq.to(x.device, torch.float32)[None, :]  # [T, hd/2]
    cos = (torch.cos(ang) * concentration)[:, None, :]         # [T, 1, hd/2]
    sin = (torch.sin(ang) * concentration)[:, None, :]
    x1, x2 = x.float().chunk(2, dim=-1)                         # [T, nh, hd/2] each
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, sinks: torch.Tensor,
              window=None, positions=None) -> torch.Tensor:
    """q [Tq, nh, hd]: the last Tq of the T tokens in k/v [T, nkv, hd]; sinks [nh] -> [Tq, nh*hd]. Causal, GQA,
    sinks, optional window. Only the Tq query rows are scored: [nh, Tq, T] fp32 (16 GiB at nh = 64, Tq = T = 8,192)."""
    (Tq, nh, hd), (T, nkv) = q.shape, k.shape[:2]
    if positions is None:
        positions = torch.arange(T, device=q.device)
    rep = nh // nkv
    kk = k.float().repeat_interleave(rep, dim=1)                # [T, nh, hd]: head h -> kv h // rep
    vv = v.float().repeat_interleave(rep, dim=1)
    scores = torch.einsum("ihd,jhd->hij", q.float(), kk) / math.sqrt(hd)  # [nh, Tq, T]
    pi, pj = positions[T - Tq:, None], positions[None, :]
    allowed = pj <= pi                                          # [Tq, T]
    if window is not None:
        allowed = allowed & (pj > pi - window)                  # exactly `window` keys incl. itself
    scores = scores.masked_fill(~allowed, float("-inf"))
    sink_col = sinks.float().view(nh, 1, 1).expand(nh, Tq, 1)  # [nh, Tq, 1]
    probs = torch.softmax(torch.cat([scores, sink_col], dim=-1), dim=-1)[..., :-1]  # drop sink
    out = torch.einsum("hij,jhd->ihd", probs, vv)               # [Tq, nh, hd]
    return out.reshape(Tq, nh * hd)


def swiglu(h: torch.Tensor, limit: float = 7.0, alpha: float = 1.702) -> torch.Tensor:
    """h [..., 2I] with interleaved gate (even) / up (odd) -> [..., I]."""
    gate = h[..., ::2].clamp(max=limit)
    up = h[..., 1::2].clamp(min=-limit, max=limit)
    return (up + 1.0) * gate * torch.sigmoid(alpha * gate)


def route(logits: torch.Tensor, top_k: int):
    """logits [T, E] -> (ids [T, k], weights [T, k]); softmax over the top-k logits only."""
    vals, ids = torch.topk(logits, top_k, dim=-1)
    return ids, torch.softmax(vals, dim=-1)


def moe(x, router_w, router_b, gate_up_w, gate_up_b, down_w, down_b, top_k=4, limit=7.0):
    """x [T, H]; gate_up_w [E, 2I, H]; down_w [E, H, I] -> [T, H]."""
    x = x.float()
    logits = x @ router_w.float().T + router_b.float()          # [T, E]
    ids, weights = route(logits, top_k)                         # [T, k]
    out = torch.zeros_like(x)                                   # [T, H]
    for e in ids.unique().tolist():
        tok, slot = (ids == e).nonzero(as_tuple=True)           # tokens routed to e
        h = x[tok] @ gate_up_w[e].float().T + gate_up_b[e].float()          # [n, 2I]
        y = swiglu(h, limit) @ down_w[e].float().T + down_b[e].float()       # [n, H]
        out.index_add_(0, tok, y * weights[tok, slot, None])
    return out


class ReferenceModel:
    def __init__(self, tensors: dict, config: dict):
        c = config
        self.L = c["num_hidden_layers"]
        self.nh, self.nkv, self.hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        self.top_k = c.get("num_experts_per_tok", c.get("experts_per_token"))
        self.eps = c.get("rms_norm_eps", 1e-5)
        self.limit = c.get("swiglu_limit", 7.0)
        self.window = c.get("sliding_window", 128)
        types = c.get("layer_types") or ["sliding_attention" if l % 2 == 0 else "full_attention"
                                         for l in range(self.L)]
        self.sliding = [t == "sliding_attention" for t in types]
        rs = c.get("rope_scaling") or c.get("rope_parameters") or {}
        theta = c.get("rope_theta", rs.get("rope_theta", 150000.0))
        self.inv_freq, self.concentration = yarn_inv_freq_and_scale(
            self.hd, theta, rs.get("factor", 32.0), rs.get("beta_fast", 32.0),
            rs.get("beta_slow", 1.0), rs.get("original_max_position_embeddings", 4096))

        f = {n: t.float() for n, t in tensors.items() if t.dtype != torch.uint8}
        self.embed, self.norm_w, self.lm_head = (f["model.embed_tokens.weight"], f["model.norm.weight"],
                                                 f["lm_head.weight"])
        self.layers = []
        for l in range(self.L):
            p = f"model.layers.{l}."
            lw = {n[len(p):]: t for n, t in f.items() if n.startswith(p)}
            for name in ("gate_up_proj", "down_proj"):          # dequantize experts once
                lw[name] = mxfp4_dequant(tensors[p + f"mlp.experts.{name}_blocks"],
                                         tensors[p + f"mlp.experts.{name}_scales"])
            self.layers.append(lw)

    def _attn_block(self, l, x, pos):
        w, T = self.layers[l], x.shape[0]
        lin = lambda n, t: t @ w[f"self_attn.{n}.weight"].T + w[f"self_attn.{n}.bias"]
        q = lin("q_proj", x).view(T, self.nh, self.hd)          # [T, nh, hd]
        k = lin("k_proj", x).view(T, self.nkv, self.hd)         # [T, nkv, hd]
        v = lin("v_proj", x).view(T, self.nkv, self.hd)
        q = rope(q, pos, self.inv_freq, self.concentration)
        k = rope(k, pos, self.inv_freq, self.concentration)
        o = attention(q, k, v, w["self_attn.sinks"], self.window if self.sliding[l] else None, pos)
        return lin("o_proj", o)                                 # [T, H]

    def _mlp_block(self, l, x):
        w = self.layers[l]
        return moe(x, w["mlp.router.weight"], w["mlp.router.bias"], w["gate_up_proj"],
                   w["mlp.experts.gate_up_proj_bias"], w["down_proj"], w["mlp.experts.down_proj_bias"],
                   self.top_k, self.limit)

    @torch.no_grad()
    def logits(self, token_ids) -> torch.Tensor:
        ids = torch.as_tensor(list(token_ids), dtype=torch.long, device=self.embed.device)
        pos = torch.arange(len(ids), device=ids.device)
        x = self.embed[ids]                                     # [T, H]
        for l in range(self.L):
            x = x + self._attn_block(l, rms_norm(x, self.layers[l]["input_layernorm.weight"], self.eps), pos)
            x = x + self._mlp_block(l, rms_norm(x, self.layers[l]["post_attention_layernorm.weight"], self.eps))
        return rms_norm(x, self.norm_w, self.eps) @ self.lm_head.T  # [T, V]

    teacher_forced_logits = logits

    def greedy(self, prompt_ids, steps: int):
        seq, new = list(prompt_ids), []
        for _ in range(steps):
            nxt = int(self.logits(seq)[-1].argmax())
            seq.append(nxt)
            new.append(nxt)
        return new
