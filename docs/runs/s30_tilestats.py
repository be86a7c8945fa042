"""How many 16-row tiles the b64 decode step's MoE runs against distinct experts (dummy 20b, eager)."""
import json, os, sys, tempfile, collections
from pathlib import Path
import torch
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from llm import LLM
from model import ops
from model.config import GptOssConfig
stats = []
orig = ops.moe_route
def rec(x, wr, br, top_k, block_m, one=False):
    r = orig(x, wr, br, top_k, block_m, one)
    if x.shape[0] == 64:
        table = r[0]
        e = table[0].tolist(); rows = (table[2] - table[1]).tolist()
        real = [i for i, v in enumerate(e) if v >= 0]
        per = collections.Counter(e[i] for i in real)
        pairs = collections.Counter()
        for i in real: pairs[e[i]] += rows[i]
        stats.append((len(real), len(per), max(pairs.values())))
    return r
ops.moe_route = rec
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
eng = LLM(str(d), load_format="dummy", tokenizer=sys.argv[1], max_slots=64, cuda_graphs=False)
gen = torch.Generator().manual_seed(0)
prompts = [torch.randint(0, 199_000, (128,), generator=gen).tolist() for _ in range(64)]
eng.generate(prompts, max_tokens=6, ignore_eos=True).result()
eng.stop()
n = len(stats)
print(f"{n} MoE calls at 64 tokens: tiles {sum(s[0] for s in stats)/n:.2f}, experts {sum(s[1] for s in stats)/n:.2f}, "
      f"max pairs/expert mean {sum(s[2] for s in stats)/n:.1f} max {max(s[2] for s in stats)}")
Path(os.environ.get("OUT", "."), "tilestats.json").write_text(json.dumps(stats))
