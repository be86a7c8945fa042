# As run from scratch/ in the forty-sixth session (calls 7 and 8; call 8 from a copy with b68ac2c's llm.py).
# A fresh Triton cache (TRITON_CACHE_DIR set by the caller): start-up time, then each prompt length's first and
# second request (greedy, 1 token: TTFT only), 20b dummy, default settings.
import json, sys, tempfile, time
from pathlib import Path
import torch
sys.path.insert(0, ".")
import llm
from model.config import GptOssConfig
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken")
print(f"{sys.argv[1]}: start-up {eng.startup_s:.1f} s, KV {eng.kv_tokens} tokens", flush=True)
for n in (2, 300, 4096, 8192):
    ts = []
    for _ in range(2):
        t0 = time.perf_counter(); eng.generate(list(range(1000, 1000 + n)), max_tokens=1).result()
        ts.append(time.perf_counter() - t0)
    print(f"{sys.argv[1]}: {n} tokens: first {ts[0]:.3f} s, second {ts[1]:.3f} s", flush=True)
out = eng.generate([list(range(50, 90))] * 4, max_tokens=8, temperature=0.8).result()
print(f"{sys.argv[1]}: sampled {[len(o.token_ids) for o in out]}; free slots {len(eng.free_slots)}", flush=True)
eng.stop()
