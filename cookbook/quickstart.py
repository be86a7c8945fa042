"""Quickstart: python cookbook/quickstart.py [MODEL_DIR]

Uses MODEL_DIR (default ./gpt-oss-20b) when it holds a checkpoint; otherwise writes a tiny random
checkpoint to ./checkpoints/gpt-oss-tiny and says so (its text is random tokens, the engine is real).
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llm import LLM  # noqa: E402
from model.config import tiny_config  # noqa: E402
from model.weights import write_checkpoint  # noqa: E402

model = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "gpt-oss-20b")
if not (model / "config.json").exists():
    model = ROOT / "checkpoints" / "gpt-oss-tiny"
    print(f"No checkpoint found: writing a TINY RANDOM checkpoint to {model}. Its output is gibberish.")
    if not (model / "config.json").exists():
        write_checkpoint(model, tiny_config(), seed=0)
# a checkpoint directory carries tokenizer.json; the tiny one falls back to a local o200k_base.tiktoken
tiktoken_file = next((p for p in (ROOT.parent / "shared/data/o200k_base.tiktoken",
                                  ROOT / "shared/data/o200k_base.tiktoken") if p.exists()), None)
engine = LLM(str(model), tokenizer=tiktoken_file)
out = engine.generate(["The capital of France is", "Write a haiku about GPUs."], max_tokens=20).result()
for o in out:
    print(repr(o.text), o.finish_reason, f"ttft {o.metrics['ttft']:.2f}s")
engine.stop()
