"""Sanity checks of tests/reference.py against hand-derived facts (CHECKPOINT_FORMAT.md sections 3-4)."""
import math
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (ReferenceModel, attention, moe, mxfp4_dequant, rms_norm, rope, route,  # noqa: E402
                       swiglu, yarn_inv_freq_and_scale, yarn_low_high)

FP4 = [0, .5, 1, 1.5, 2, 3, 4, 6, 0, -.5, -1, -1.5, -2, -3, -4, -6]


def test_mxfp4_nibbles_table_and_scale():
    byte = torch.tensor([(15 - j) << 4 | j for j in range(16)], dtype=torch.uint8)  # lo=j, hi=15-j
    blocks = byte.expand(3, 1, 16).clone()                      # [out=3, G=1, 16]
    scales = torch.tensor([[127], [128], [126]], dtype=torch.uint8)
    w = mxfp4_dequant(blocks, scales)
    assert w.shape == (3, 32) and w.dtype == torch.float32
    expect = torch.tensor([v for j in range(16) for v in (FP4[j], FP4[15 - j])])
    assert torch.equal(w[0], expect) and torch.equal(w[1], 2 * expect) and torch.equal(w[2], expect / 2)
    assert w[0, 16].item() == 0 and not torch.signbit(w[0, 16])  # feature 16 = low nibble of byte 8 = code 8


def test_yarn():
    low, high = yarn_low_high(64)
    assert low == pytest.approx(8.0928, abs=1e-4) and high == pytest.approx(17.3980, abs=1e-4)
    inv, conc = yarn_inv_freq_and_scale(64)
    assert inv.shape == (32,) and conc == pytest.approx(1.346574, abs=1e-6)
    extra = [150000.0 ** (-2 * i / 64) for i in range(32)]
    assert inv[8].item() == pytest.approx(extra[8], rel=1e-6)  # i=8 < low: pure extrapolation
    assert inv[18].item() == pytest.approx(extra[18] / 32, rel=1e-6)  # i=18 > high: pure interpolation
    r = (12 - low) / (high - low)                               # not truncated to 8/18
    assert inv[12].item() == pytest.approx(extra[12] * (r / 32 + 1 - r), rel=1e-6)


def test_rope_half_split_and_relative():
    inv = torch.tensor([0.7, 0.1])
    x = torch.tensor([[[1.0, 0.0, 0.0, 0.0]]])                  # [T=1, nh=1, hd=4], e_0
    y = rope(x, torch.tensor([3]), inv, 2.0)
    assert torch.allclose(y[0, 0], torch.tensor([2 * math.cos(2.1), 0, 2 * math.sin(2.1), 0]), atol=1e-6)
    q, k = torch.randn(1, 1, 4).expand(4, 1, 4), torch.randn(1, 1, 4).expand(4, 1, 4)
    pos = torch.tensor([5, 2, 9, 6])
    dots = (rope(q, pos, inv, 1.5)[[0, 2]] * rope(k, pos, inv, 1.5)[[1, 3]]).sum(-1)  # both at distance 3
    assert torch.allclose(dots[0], dots[1], atol=1e-5)
    same = (rope(q, pos, inv, 1.5) * rope(k, pos, inv, 1.5)).sum(-1)  # equal positions: conc^2 * q.k
    assert torch.allclose(same, 2.25 * (q * k).sum(-1), atol=1e-5)


def test_sink_single_key_and_gqa():
    q, k, v = torch.randn(1, 2, 8), torch.randn(1, 1, 8), torch.randn(1, 1, 8)
    sinks = torch.tensor([0.3, -1.2])
    out = attention(q, k, v, sinks, None).view(2, 8)
    s = (q[0] * k[0, 0]).sum(-1) / math.sqrt(8)                 # [2]
    assert torch.allclose(out, v[0, 0] * torch.sigmoid(s - sinks)[:, None], atol=1e-6)
    # q = 0: uniform weights 1/(i+1+e^sink); head h reads kv head h // 2
    T, v = 3, torch.randn(3, 2, 4)
    out = attention(torch.zeros(T, 4, 4), torch.randn(T, 2, 4), v, torch.zeros(4), None).view(T, 4, 4)
    for i in range(T):
        for h in range(4):
            assert torch.allclose(out[i, h], v[: i + 1, h // 2].sum(0) / (i + 2), atol=1e-6)


def test_sliding_window_128():
    T = 130
    v = torch.zeros(T, 1, 1)
    v[0] = 1.0                                                  # output = weight on key 0
    args = (torch.zeros(T, 1, 1), torch.zeros(T, 1, 1), v, torch.tensor([-1e4]))
    w = attention(*args, 128)[:, 0]
    assert w[127] == pytest.approx(1 / 128) and w[128] == 0     # distance 127 seen, 128 not
    assert attention(*args, None)[128, 0] == pytest.approx(1 / 129)


def test_swiglu_clamps_and_rms_norm():
    out = swiglu(torch.tensor([-10.0, 9.0, 10.0, -8.0, 0.5, 2.0]))  # (gate, up) pairs interleaved, not halves
    assert out[2].item() == pytest.approx(3 * 0.5 / (1 + math.exp(-0.851)), rel=1e-5)
    assert out[0].item() == pytest.approx(8 * -10 * 1 / (1 + math.exp(17.02)), rel=1e-5)
    assert out[1].item() == pytest.approx(-6 * 7 / (1 + math.exp(-7 * 1.702)), rel=1e-5)
    d = math.sqrt(12.5 + 1e-5)                                  # mean([3^2, 4^2]) = 12.5
    assert torch.allclose(rms_norm(torch.tensor([[3.0, 4.0]]), torch.tensor([1.0, 2.0])),
                          torch.tensor([[3 / d, 8 / d]]), atol=1e-6)


def test_route_and_moe_softmax_over_topk_only():
    ids, w = route(torch.tensor([[3.0, 1.0, 2.0, -5.0]]), 2)
    assert ids.tolist() == [[0, 2]]
    assert torch.allclose(w, torch.tensor([[math.e / (math.e + 1), 1 / (math.e + 1)]]))
    E, H, I = 4, 3, 2
    down_b = torch.randn(E, H)                                  # zero weights: y_e = down_b[e]
    y = moe(torch.randn(1, H), torch.zeros(E, H), torch.tensor([3.0, 1.0, 2.0, -5.0]),
            torch.zeros(E, 2 * I, H), torch.zeros(E, 2 * I), torch.zeros(E, H, I), down_b, top_k=2)
    assert torch.allclose(y[0], w[0, 0] * down_b[0] + w[0, 1] * down_b[2], atol=1e-6)


def tiny(seed=0, zero_branches=False):
    g = torch.Generator().manual_seed(seed)
    L, H, I, E, nh, nkv, hd, V = 2, 32, 32, 4, 4, 2, 8, 50
    cfg = dict(hidden_size=H, intermediate_size=I, num_hidden_layers=L, num_attention_heads=nh,
               num_key_value_heads=nkv, head_dim=hd, num_local_experts=E, num_experts_per_tok=2,
               rms_norm_eps=1e-5, rope_theta=150000.0, sliding_window=3, swiglu_limit=7.0, vocab_size=V,
               rope_scaling=dict(rope_type="yarn", factor=32.0, beta_fast=32.0, beta_slow=1.0,
                                 original_max_position_embeddings=4096),
               layer_types=["sliding_attention", "full_attention"])
    r = lambda *s: (torch.randn(*s, generator=g) * 0.5).bfloat16()
    t = {"model.embed_tokens.weight": r(V, H), "model.norm.weight": r(H), "lm_head.weight": r(V, H)}
    for l in range(L):
        p = f"model.layers.{l}."
        for n, (o, i) in dict(q_proj=(nh * hd, H), k_proj=(nkv * hd, H), v_proj=(nkv * hd, H),
                              o_proj=(H, nh * hd)).items():
            t[p + f"self_attn.{n}.weight"], t[p + f"self_attn.{n}.bias"] = r(o, i), r(o)
        t.update({p + "input_layernorm.weight": r(H), p + "post_attention_layernorm.weight": r(H),
                  p + "self_attn.sinks": r(nh), p + "mlp.router.weight": r(E, H), p + "mlp.router.bias": r(E)})
        for n, (o, i) in dict(gate_up_proj=(2 * I, H), down_proj=(H, I)).items():
            u8 = lambda lo, hi, *s: torch.randint(lo, hi, s, generator=g, dtype=torch.uint8)
            t[p + f"mlp.experts.{n}_blocks"], t[p + f"mlp.experts.{n}_scales"] = (
                u8(0, 256, E, o, i // 32, 16), u8(122, 128, E, o, i // 32))
            t[p + f"mlp.experts.{n}_bias"] = r(E, o)
        if zero_branches:                                       # attention and MoE add exactly 0
            for n in ("self_attn.o_proj.weight", "self_attn.o_proj.bias", "mlp.experts.down_proj_bias"):
                t[p + n] = torch.zeros_like(t[p + n])
            t[p + "mlp.experts.down_proj_blocks"].zero_()
    return ReferenceModel(t, cfg), t


def test_model_zero_branches_is_embed_norm_lmhead():
    m, t = tiny(zero_branches=True)
    ids = [1, 7, 3, 49]
    x = t["model.embed_tokens.weight"].float()[ids]
    expect = rms_norm(x, t["model.norm.weight"].float()) @ t["lm_head.weight"].float().T
    assert torch.allclose(m.logits(ids), expect, atol=1e-5)


def test_model_causal_and_greedy():
    m, _ = tiny(seed=1)
    seq = [5, 9, 2, 33, 17, 8, 40]
    full = m.logits(seq)
    assert full.shape == (7, 50) and full.dtype == torch.float32 and torch.isfinite(full).all()
    assert torch.allclose(m.logits(seq[:4]), full[:4], atol=1e-5)  # future tokens never leak
    out = m.greedy(seq[:3], 3)
    assert len(out) == 3 and all(t == int(m.logits(seq[:3] + out[:i])[-1].argmax()) for i, t in enumerate(out))
