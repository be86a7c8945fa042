"""Streaming, raw and chat: python cookbook/streaming.py [MODEL_DIR]"""
import sys

from common import model_dir, tiktoken_file
from llm import LLM

path, tiny = model_dir(sys.argv)
engine = LLM(path, tokenizer=tiktoken_file())
n = 4 if tiny else 24
for delta in engine.stream("Once upon a time", max_tokens=n, temperature=0.8, top_p=0.95, seed=0):
    print(delta.text, end="", flush=True)
print()
for item in engine.chat_stream([{"role": "user", "content": "Count to five."}], max_tokens=n):
    if hasattr(item, "kind"):  # a typed delta: reasoning, text, tool_call_name or tool_call_args
        print(f"<{item.kind}>{item.text}", end="", flush=True)
    else:  # the ChatOutput at the end
        print(f"\nfinish: {item.finish_reason}")
engine.stop()
