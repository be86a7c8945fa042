# 20b, graphs off, small KV: memory of one eager decode warm-up at B tokens, and the largest live blocks after it.
import json, sys, tempfile, collections
from pathlib import Path
import torch
sys.path.insert(0, ".")
import llm
from model.config import GptOssConfig
G = 2 ** 30
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
S = int(sys.argv[1])
eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=S,
              num_pages=2000, cuda_graphs=False)
torch.cuda.synchronize(); base = torch.cuda.memory_allocated(); torch.cuda.reset_peak_memory_stats()
print(f"S={S} ready alloc {base / G:.2f} GiB", flush=True)
torch.cuda.memory._record_memory_history(max_entries=200000)
for B in [b for b in (256, 512, 1024) if b <= S]:
    with torch.no_grad():
        ids, logits = eng._decode_body(B, False)
    torch.cuda.synchronize()
    print(f"B={B}: live over ready {(torch.cuda.memory_allocated() - base) / G:.3f} GiB, peak over ready "
          f"{(torch.cuda.max_memory_allocated() - base) / G:.3f} GiB", flush=True)
    del ids, logits
snap = torch.cuda.memory._snapshot()
sizes = collections.Counter()
for tr in snap["device_traces"][0]:
    if tr["action"] == "alloc" and tr["size"] > 50 * 2**20:
        fr = [f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}" for f in tr["frames"]
              if "main" in f["filename"] or "/work" in f["filename"] or "model" in f["filename"]][:3]
        sizes[(tr["size"] >> 20, " < ".join(fr))] += 1
for (mb, where), n in sorted(sizes.items(), key=lambda kv: -kv[0][0] * kv[1])[:15]:
    print(f"{n:4d} x {mb:6d} MiB  {where}")
eng.stop()
