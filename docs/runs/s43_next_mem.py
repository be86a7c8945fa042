# For the next session (docs/runs/s43_next_calls.sh, call 1), from a tree's root with shared/ linked there:
#   python s43_next_mem.py [MODEL [SLOTS]]   (120b and 8 slots by default)
# Prints torch's memory around the load (split blocks that empty_cache cannot give back: c84a537's check), the
# KV cache the engine sized, and the peak above the load during a 2-chunk prefill and its decode, with CUDA graphs
# (the 4 GiB reserve in LLM._allocate_cache was never measured against it).
import json, random, sys, tempfile
from pathlib import Path

import torch

sys.path.insert(0, ".")
import llm
from model.config import GptOssConfig, gpt_oss_120b

G = 2 ** 30


def stats(tag):
    s, (free, _) = torch.cuda.memory_stats(), torch.cuda.mem_get_info()
    print(f"{tag}: free {free / G:.2f} alloc {s['allocated_bytes.all.current'] / G:.2f} reserved "
          f"{s['reserved_bytes.all.current'] / G:.2f} peak {s['allocated_bytes.all.peak'] / G:.2f} split blocks "
          f"{s['inactive_split_bytes.all.current'] / G:.2f} GiB", flush=True)


allocate = llm.LLM._allocate_cache
def wrapped(self, num_pages, util):
    stats("load done"), torch.cuda.empty_cache(), stats("after empty_cache")
    return allocate(self, num_pages, util)
llm.LLM._allocate_cache = wrapped

cfg = gpt_oss_120b() if (sys.argv[1:] or ["120b"])[0] == "120b" else GptOssConfig()
d = Path(tempfile.mkdtemp())
(d / "config.json").write_text(json.dumps(cfg.to_dict()))
eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=int((sys.argv[2:] or [8])[0]))
stats("engine ready")
kv = sum(t.numel() * t.element_size() for t in vars(eng.kv).values() if torch.is_tensor(t))  # a dataclass
print(f"KV cache and rings {kv / G:.2f} GiB: graphs and buffers = ready - after empty_cache - that", flush=True)
torch.cuda.reset_peak_memory_stats()
base = torch.cuda.memory_allocated()
rng = random.Random(0)
prompt = [rng.randrange(199_000) for _ in range(min(2 * eng.prefill_chunk + 7, eng.kv_tokens - 64))]
eng.generate([prompt], max_tokens=32).result()
print(f"KV {eng.kv_tokens} tokens; peak over the ready engine in a {len(prompt)}-token prefill + 32 steps: "
      f"{(torch.cuda.max_memory_allocated() - base) / G:.2f} GiB", flush=True)
eng.stop()
