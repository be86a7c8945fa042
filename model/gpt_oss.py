"""The gpt-oss model: embedding, L x (attention + MoE), final norm, lm_head, over ops.py.

Legend: T tokens in the step, B sequences, H hidden, NH/NKV heads, D head dim, V vocab, R logit rows.
The model owns no cache: llm.py passes the KV tensors and the step's metadata in `StepInputs`."""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from . import ops
from .config import GptOssConfig


@dataclass
class StepInputs:
    ids: torch.Tensor  # [T] token ids
    pos: torch.Tensor  # [T] absolute positions
    cu_seqlens: torch.Tensor  # [B + 1] token offsets of each sequence in the step
    start: torch.Tensor  # [B] tokens already cached per sequence
    block_table: torch.Tensor  # [B, W] pages of the full-attention cache
    ring_table: torch.Tensor  # [B, W] with page stride 0: the sequence's slot in the 128-row rings
    full_rows: torch.Tensor | None  # [T] paged-cache row of each token; None at decode (RoPE reads the tables)
    ring_rows: torch.Tensor | None  # [T] ring row of each token, -1 where a later token of the chunk takes it
    logit_rows: torch.Tensor | slice  # [R] rows of the step whose next token is wanted (decode: all)
    max_q: int  # most new tokens of one sequence (1 = decode)
    splits: int = 1  # KV splits for decode attention over long contexts


@dataclass
class KVCache:
    k_full: torch.Tensor  # [Lf, P, NKV, D], P = pages * page
    v_full: torch.Tensor
    k_ring: torch.Tensor  # [Ls, slots * 128, NKV, D]
    v_ring: torch.Tensor
    page: int


def yarn_cos_sin(cfg: GptOssConfig, max_pos, device):
    """[max_pos, D] float32: cos | sin of YaRN frequencies, both times the concentration 0.1 ln(32) + 1."""
    D, rs = cfg.head_dim, cfg.rope_scaling
    factor, L0 = rs["factor"], rs["original_max_position_embeddings"]
    extra = cfg.rope_theta ** -(torch.arange(0, D, 2, dtype=torch.float32) / D)  # [D/2]
    corr = lambda beta: (D / 2) * math.log(L0 / (beta * 2 * math.pi)) / math.log(cfg.rope_theta)
    low, high = corr(rs["beta_fast"]), corr(rs["beta_slow"])  # not truncated to integers
    ramp = ((torch.arange(D // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    inv_freq = extra / factor * ramp + extra * (1 - ramp)
    ang = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv_freq[None]  # [P, D/2]
    return (torch.cat([ang.cos(), ang.sin()], dim=1) * cfg.rope_concentration).to(device)


class GptOss:
    def __init__(self, cfg: GptOssConfig, glob: dict, layers: list, max_pos, device):
        self.cfg, self.layers = cfg, layers
        self.embed, self.norm, self.lm_head = glob["embed"], glob["norm"], glob["lm_head"]
        self.cos_sin = yarn_cos_sin(cfg, max_pos, device)
        # counts for the split gate_up and split decode attention, zero between launches (each zeroes what it counted)
        self.counters = torch.zeros(4096, dtype=torch.int32, device=device)
        # index of each layer within its own cache (rings for sliding layers, pages for the rest)
        self.cache_index = [cfg.layer_types[:l].count(t) for l, t in enumerate(cfg.layer_types)]

    def forward(self, inp: StepInputs, kv: KVCache, out=None):
        """Returns logits [R, V] (float32) for inp.logit_rows, in `out` if given (decode graphs share one)."""
        cfg = self.cfg
        h, delta = self.embed[inp.ids], None  # [T, H] residual stream
        for l, w in enumerate(self.layers):
            x = ops.add_rmsnorm(h, w["ln1"], cfg.rms_norm_eps, delta)
            o = self.attention(l, w, x, inp, kv)  # [T, NH * D]
            o = ops.linear(o, w["wo"], w["bo"], upto=64)  # [T, H], or [T, S, H] partials
            x = ops.add_rmsnorm(h, w["ln2"], cfg.rms_norm_eps, o, w["wr"].dtype)  # the router's dtype
            delta = ops.moe(x, w["wr"], w["br"], w["w1"], w["s1"], w["b1"], w["w2"], w["s2"], w["b2"],
                            cfg.num_experts_per_tok, cfg.swiglu_limit, self.counters)  # [T, k, H]
        x = ops.add_rmsnorm(h, self.norm, cfg.rms_norm_eps, delta)
        x = x[inp.logit_rows]  # [R, H]
        # fp32 logits straight from cuBLAS (CUDA only): the bf16 round trip cost 27 us per step at batch 64
        if x.is_cuda:
            return torch.mm(x, self.lm_head.t(), out_dtype=torch.float32, out=out)  # [R, V]
        return F.linear(x, self.lm_head).float() if out is None else out.copy_(F.linear(x, self.lm_head))

    def attention(self, l, w, x, inp: StepInputs, kv: KVCache):
        cfg, i = self.cfg, self.cache_index[l]
        nh, nkv, T = cfg.num_attention_heads, cfg.num_key_value_heads, x.shape[0]
        # up to 16 tokens 4 split-K partials, summed by rope_kv: 9.2 us a layer against cuBLAS's 10.1, PDL-launched
        qkv = ops.linear(x, w["wqkv"], w["bqkv"], splits=4)
        qkv = qkv.view(*qkv.shape[:-1], nh + 2 * nkv, cfg.head_dim)  # [T, (S,) NH + 2 NKV, D]
        if cfg.sliding[l]:
            kc, vc, table, rows, window, page = kv.k_ring[i], kv.v_ring[i], inp.ring_table, inp.ring_rows, 128, 128
        else:
            kc, vc, table, rows, window, page = kv.k_full[i], kv.v_full[i], inp.block_table, inp.full_rows, 0, kv.page
        # decode appends during RoPE (one launch); a prefill chunk appends after attention, because its
        # ring writes would overwrite keys that the chunk's earlier queries still need
        fused = inp.max_q == 1
        qkv = ops.rope_kv(qkv, nh, nkv, inp.pos, self.cos_sin, kc, vc, table if fused else None, x.dtype, page)
        o = ops.attention(qkv, kc, vc, table, inp.cu_seqlens, inp.start, w["sinks"], nh, nkv, window, page,
                              inp.max_q, 1 if cfg.sliding[l] else inp.splits, appended=fused, counters=self.counters)
        if not fused:
            ops.rope_kv(qkv, nh, nkv, k_cache=kc, v_cache=vc, slots=rows)
        return o.view(T, nh * cfg.head_dim)
