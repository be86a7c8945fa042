# The forty-fifth session: memory at start-up, per bucket captured; as run from scratch/ at 0da4216 (no sampling loop, no leading newline) and at 0d54ceb (as here)
# 20b at N slots: memory at each stage of start-up, per captured bucket, and the OOM's traceback if any.
import json, sys, tempfile, traceback
from pathlib import Path
import torch
sys.path.insert(0, ".")
import llm
from model.config import GptOssConfig
G = 2 ** 30
def stats(tag):
    s, (free, total) = torch.cuda.memory_stats(), torch.cuda.mem_get_info()
    print(f"\n{tag}: free {free / G:.2f}/{total / G:.2f} alloc {s['allocated_bytes.all.current'] / G:.2f} reserved "
          f"{s['reserved_bytes.all.current'] / G:.2f} peak {s['allocated_bytes.all.peak'] / G:.2f}", flush=True)
allocate, capture = llm.LLM._allocate_cache, llm.LLM._capture
def wa(self, num_pages, util):
    stats("before cache"); r = allocate(self, num_pages, util); stats("after cache"); torch.cuda.reset_peak_memory_stats(); return r
def wc(self, B, sampling):
    g = capture(self, B, sampling)
    if B % 128 == 0 or B < 8: stats(f"captured B={B}")
    return g
llm.LLM._allocate_cache, llm.LLM._capture = wa, wc
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
try:
    eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=int(sys.argv[1]))
    stats("ready")
    for B in eng.buckets[::-1]:  # the worst case: a sampling graph for every bucket too
        eng.graphs[(B, True)] = eng._capture(B, True)
    stats("sampling graphs too"); eng.stop()
except Exception:
    stats("failed"); traceback.print_exc(limit=12)
