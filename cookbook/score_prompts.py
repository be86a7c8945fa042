"""Prompt scoring with prompt_logprobs (eval harnesses, perplexity): python cookbook/score_prompts.py [MODEL_DIR]"""
import math
import sys

from common import model_dir, tiktoken_file
from llm import LLM

path, tiny = model_dir(sys.argv)
engine = LLM(path, tokenizer=tiktoken_file())
texts = ["The quick brown fox jumps over the lazy dog.", "Dog lazy the over jumps fox brown quick the."]
outs = engine.generate(texts, max_tokens=1, prompt_logprobs=0).result()
for text, o in zip(texts, outs):
    lps = [d[t] for d, t in zip(o.prompt_logprobs[1:], o.prompt_token_ids[1:])]
    print(f"perplexity {math.exp(-sum(lps) / len(lps)):10.2f}  {text!r}")
engine.stop()
