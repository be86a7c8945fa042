"""The o200k_harmony tokenizer of gpt-oss, built offline with tiktoken from a checkpoint's Hugging Face
``tokenizer.json`` (its byte-level BPE vocab mapped back to raw bytes) or from an ``o200k_base.tiktoken`` ranks
file (``base64(token) rank`` per line): the same ``tiktoken.Encoding`` either way."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import tiktoken

# The o200k_base pre-tokenization regex (identical for o200k_harmony).
O200K_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*",  # then newlines, spaces before a non-space, the rest:
    r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])
N_BASE = 199_998   # mergeable ranks 0..199997
N_VOCAB = 201_088  # specials fill 199998..201087
NAMED_SPECIALS = {"<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|return|>": 200002, "<|constrain|>": 200003,
                  "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008,
                  "<|call|>": 200012, "<|endofprompt|>": 200018}


def _special_tokens(overrides: dict[int, str] | None = None) -> dict[str, int]:
    """All specials 199998..201087: named ones, ``<|reserved_N|>`` elsewhere, then overrides (id -> name)."""
    by_id = {i: f"<|reserved_{i}|>" for i in range(N_BASE, N_VOCAB)}
    by_id.update({i: name for name, i in NAMED_SPECIALS.items()})
    by_id.update(overrides or {})
    return {name: i for i, name in by_id.items()}


def _unicode_to_byte() -> dict[str, int]:
    """Inverse of GPT-2's byte-to-unicode table used by byte-level BPE vocabularies."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in printable]  # mapped to chr(256 + k), in order
    return {**{chr(b): b for b in printable}, **{chr(256 + k): b for k, b in enumerate(others)}}


class Tokenizer:
    def __init__(self, mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int]):
        self.enc = tiktoken.Encoding(name="o200k_harmony", pat_str=O200K_PATTERN, mergeable_ranks=mergeable_ranks,
                                     special_tokens=special_tokens, explicit_n_vocab=N_VOCAB)
        self.n_vocab: int = self.enc.n_vocab
        self.special = s = {k: v for k, v in special_tokens.items() if not k.startswith("<|reserved_")}  # name: id
        self.start, self.end, self.message = s["<|start|>"], s["<|end|>"], s["<|message|>"]
        self.channel, self.constrain = s["<|channel|>"], s["<|constrain|>"]
        self.return_, self.call, self.endoftext = s["<|return|>"], s["<|call|>"], s["<|endoftext|>"]
        self.eos_ids: tuple[int, ...] = (self.return_, self.call, self.endoftext)  # stop generation on any

    @classmethod
    def from_dir(cls, model_dir, tiktoken_file=None) -> "Tokenizer":
        json_path = Path(model_dir) / "tokenizer.json"
        if json_path.is_file():
            return cls.from_tokenizer_json(json_path)
        if tiktoken_file is not None and Path(tiktoken_file).is_file():
            return cls.from_tiktoken_file(tiktoken_file)
        raise FileNotFoundError(f"no tokenizer found: tried {json_path} and tiktoken_file={tiktoken_file}")

    @classmethod
    def from_tiktoken_file(cls, path) -> "Tokenizer":
        lines = (line.split() for line in Path(path).read_bytes().splitlines() if line.strip())  # b"<base64> <rank>"
        return cls({base64.b64decode(token): int(rank) for token, rank in lines}, _special_tokens())

    @classmethod
    def from_tokenizer_json(cls, path) -> "Tokenizer":
        data, u2b = json.loads(Path(path).read_text(encoding="utf-8")), _unicode_to_byte()
        ranks = {bytes(u2b[ch] for ch in token): rank for token, rank in data["model"]["vocab"].items()}
        named = {t["id"]: t["content"] for t in data.get("added_tokens", []) if N_BASE <= t["id"] < N_VOCAB}
        return cls(ranks, _special_tokens(named))

    def encode(self, text: str, allow_special: bool = False) -> list[int]:
        """Encode text; special-token strings become special ids only if ``allow_special``."""
        return self.enc.encode(text, allowed_special="all") if allow_special else self.enc.encode_ordinary(text)

    def decode_bytes(self, ids) -> bytes:
        return self.enc.decode_bytes([int(i) for i in ids])

    def decode(self, ids) -> str:
        return self.decode_bytes(ids).decode("utf-8", errors="replace")
