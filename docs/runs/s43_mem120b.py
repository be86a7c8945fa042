# Forty-third session: where 120b's memory goes at load (H100 80GB). Run from a tree's root (shared/ linked there):
# python mem120b.py. Output in docs/performance.md's forty-third section.
import sys, json, tempfile, torch
from pathlib import Path
sys.path.insert(0, ".")
import llm
from model.config import gpt_oss_120b
G = 2 ** 30
def st(tag):
    f, t = torch.cuda.mem_get_info()
    s = torch.cuda.memory_stats()
    print(f"{tag}: free {f/G:.2f} alloc {torch.cuda.memory_allocated()/G:.2f} reserved {torch.cuda.memory_reserved()/G:.2f} "
          f"max_alloc {torch.cuda.max_memory_allocated()/G:.2f} segments {s.get('segment.all.current')} "
          f"inactive_split {s.get('inactive_split_bytes.all.current', 0)/G:.2f}", flush=True)
orig = llm.LLM._allocate_cache
def wrapped(self, n, u):
    st("before empty_cache"); torch.cuda.empty_cache(); st("after empty_cache"); return orig(self, n, u)
llm.LLM._allocate_cache = wrapped
cfg = gpt_oss_120b()
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(cfg.to_dict()))
eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=8, cuda_graphs=False)
st("after init")
eng.stop()
