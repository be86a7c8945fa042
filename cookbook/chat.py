"""Chat with a reasoning effort: python cookbook/chat.py [MODEL_DIR]"""
import sys

from common import model_dir, tiktoken_file
from llm import LLM

path, tiny = model_dir(sys.argv)
engine = LLM(path, tokenizer=tiktoken_file())
conversation = [{"role": "system", "content": "Answer in one sentence."},
                {"role": "user", "content": "Why is the sky blue?"}]
for effort in ("low", "high"):
    out = engine.chat(conversation, reasoning_effort=effort, max_tokens=4 if tiny else 64).result()
    print(f"[{effort}] reasoning: {out.reasoning!r}\n[{effort}] answer: {out.text!r} ({out.finish_reason})")
engine.stop()
