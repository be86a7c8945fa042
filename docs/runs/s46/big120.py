# As run from scratch/ in the forty-sixth session (calls 5 and 6).
# 120b dummy at max_slots=1024 on an 80 GB card: a clean refusal, or a start (and one request served)?
import json, sys, tempfile, time
from pathlib import Path
import torch
sys.path.insert(0, ".")
import llm
from model.config import gpt_oss_120b
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(gpt_oss_120b().to_dict()))
t0 = time.perf_counter()
try:
    eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=int(sys.argv[1]))
except Exception as e:
    print(f"refused after {time.perf_counter() - t0:.1f} s: {type(e).__name__}: {str(e)[:300]}", flush=True)
    sys.exit(0)
free, total = torch.cuda.mem_get_info()
print(f"started in {time.perf_counter() - t0:.1f} s: KV {eng.kv_tokens} tokens, free {free / 2**30:.2f} GiB", flush=True)
out = eng.generate([list(range(100, 400))] * 8, max_tokens=16, ignore_eos=True, temperature=0.7).result()
free, _ = torch.cuda.mem_get_info()
print(f"served {sum(len(o.token_ids) for o in out)} tokens; free {free / 2**30:.2f} GiB", flush=True)
eng.stop()
