"""Quickstart: python cookbook/quickstart.py [MODEL_DIR]"""
import sys

from common import model_dir, tiktoken_file
from llm import LLM

path, tiny = model_dir(sys.argv)
engine = LLM(path, tokenizer=tiktoken_file())
prompts = ["The capital of France is", "Write a haiku about GPUs."]
outs = engine.generate(prompts, max_tokens=4 if tiny else 20).result()
for o in outs:
    print(repr(o.text), o.finish_reason, f"ttft {o.metrics['ttft']:.2f}s")
engine.stop()
