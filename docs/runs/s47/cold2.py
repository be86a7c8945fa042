# The forty-seventh session's check of its start-up prompts (run by docs/runs/s47_next_calls.sh 1, from a tree's
# root, with a fresh TRITON_CACHE_DIR): start-up time, then each prompt length's first and second request (greedy,
# 1 token: TTFT only), 20b dummy at the defaults. By cookbook/compile_variants.py (20b, 256 slots) the forty-sixth
# session's start-up (2 tokens and the chunk) left compiles to 5, 20 and 2,000 tokens, and covered 300 and 4,096.
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, ".")
import llm
from model.config import GptOssConfig
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken")
print(f"{sys.argv[1]}: start-up {eng.startup_s:.1f} s, KV {eng.kv_tokens} tokens", flush=True)
for n in (5, 20, 300, 2000, 4096):
    ts = []
    for _ in range(2):
        t0 = time.perf_counter(); eng.generate(list(range(1000, 1000 + n)), max_tokens=1).result()
        ts.append(time.perf_counter() - t0)
    print(f"{sys.argv[1]}: {n} tokens: first {ts[0]:.3f} s, second {ts[1]:.3f} s", flush=True)
eng.stop()
