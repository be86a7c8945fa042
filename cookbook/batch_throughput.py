"""Offline batch throughput: python cookbook/batch_throughput.py [MODEL_DIR] [N_PROMPTS] [MAX_TOKENS]"""
import sys
import time

from common import model_dir, tiktoken_file
from llm import LLM

path, tiny = model_dir(sys.argv[:2])
n = int(sys.argv[2]) if len(sys.argv) > 2 else (4 if tiny else 64)
max_tokens = int(sys.argv[3]) if len(sys.argv) > 3 else (4 if tiny else 128)
engine = LLM(path, tokenizer=tiktoken_file())
prompts = [f"Write a short story about robot number {i}." for i in range(n)]
t0 = time.perf_counter()
outs = engine.generate(prompts, max_tokens=max_tokens, ignore_eos=True).result()
dt = time.perf_counter() - t0
tokens = sum(len(o.token_ids) for o in outs)
print(f"{n} prompts, {tokens} output tokens in {dt:.2f} s: {tokens / dt:.1f} output tok/s")
engine.stop()
