"""One dataclass mirroring config.json, checked once."""
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path


@dataclass
class GptOssConfig:
    hidden_size: int = 2880
    intermediate_size: int = 2880
    num_hidden_layers: int = 24
    num_attention_heads: int = 64
    num_key_value_heads: int = 8
    head_dim: int = 64
    num_local_experts: int = 32
    num_experts_per_tok: int = 4
    vocab_size: int = 201088
    rms_norm_eps: float = 1e-5
    rope_theta: float = 150000.0
    rope_scaling: dict = field(default_factory=lambda: {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                               "beta_slow": 1.0, "original_max_position_embeddings": 4096, "truncate": False})
    sliding_window: int = 128
    swiglu_limit: float = 7.0
    max_position_embeddings: int = 131072
    layer_types: list = None
    model_type: str = "gpt_oss"
    quantization_config: dict = field(default_factory=lambda: dict(quant_method="mxfp4"))
    eos_token_id: int | list = 200002  # unused (the stop ids are the tokenizer's); a list in some configs
    pad_token_id: int | None = 199999

    def __post_init__(self):
        def need(ok, what):
            if not ok:
                raise ValueError(f"config.json: {what}")
        need(self.model_type == "gpt_oss", f"model_type {self.model_type!r} is not 'gpt_oss'")
        qm = self.quantization_config.get("quant_method") if isinstance(self.quantization_config, dict) else None
        need(qm == "mxfp4", f"quantization method {qm!r}: this engine runs MXFP4 experts only")
        rs = self.rope_scaling if isinstance(self.rope_scaling, dict) else {}
        need(rs.get("rope_type", rs.get("type")) == "yarn", f"rope_scaling {self.rope_scaling!r} is not yarn")
        num = lambda t, v: type(v) is int and v >= 1 if t is int else type(v) in (int, float) and 0 < v < math.inf
        bad = [f.name for f in fields(self) if f.type in (int, float) and not num(f.type, getattr(self, f.name))]
        need(not bad, f"{', '.join(bad)}: not a number > 0 (sizes: an int >= 1)")
        yarn = ("factor", "beta_fast", "beta_slow", "original_max_position_embeddings")  # gpt_oss.yarn_cos_sin's
        need(all(num(float, rs.get(k)) for k in yarn), f"rope_scaling needs {', '.join(yarn)} > 0, got {rs!r}")
        need(self.head_dim in (32, 64, 128), f"head_dim {self.head_dim} not in (32, 64, 128)")
        g, rem = divmod(self.num_attention_heads, self.num_key_value_heads)  # g query heads a KV head: a tl.arange
        need(rem == 0 and g & (g - 1) == 0, "num_attention_heads / num_key_value_heads must be a power of 2")
        need(self.hidden_size % 32 == self.intermediate_size % 32 == 0, "hidden_size, intermediate_size: not 32 x n")
        need(self.num_experts_per_tok <= self.num_local_experts, "num_experts_per_tok out of range")  # and >= 1 above
        need(self.sliding_window == 128, f"sliding_window {self.sliding_window}: the ring buffer is 128")
        if self.layer_types is None:  # OpenAI's rule: even layers slide
            self.layer_types = [("full" if i % 2 else "sliding") + "_attention" for i in range(self.num_hidden_layers)]
        need(len(self.layer_types) == self.num_hidden_layers, "layer_types length != num_hidden_layers")
        need(set(self.layer_types) <= {"sliding_attention", "full_attention"}, "unknown layer_types entry")

    @classmethod
    def from_file(cls, path):
        raw = json.loads(Path(path).read_text())
        if "experts_per_token" in raw:  # older name for the same field
            raw.setdefault("num_experts_per_tok", raw["experts_per_token"])
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__})

    def to_dict(self):
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    @property
    def sliding(self):  # per layer: True for a 128-key window
        return [t == "sliding_attention" for t in self.layer_types]

    @property
    def rope_concentration(self):  # multiplies cos and sin
        return 0.1 * math.log(self.rope_scaling["factor"]) + 1.0


def gpt_oss_120b():
    return GptOssConfig(num_hidden_layers=36, num_local_experts=128)


def tiny_config(**kw):
    """A few-layer model with the real vocab, both layer types and 8 experts, for tests.
    intermediate 96 is not a multiple of 64, so the MoE K loop's masking is exercised."""
    base = dict(hidden_size=128, intermediate_size=96, num_hidden_layers=4, num_attention_heads=8,
                num_key_value_heads=2, head_dim=64, num_local_experts=8, num_experts_per_tok=4)
    return GptOssConfig(**{**base, **kw})
