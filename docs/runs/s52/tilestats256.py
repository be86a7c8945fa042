"""Fifty-second session: the b256 decode step's routing on dummy 20b (eager): per MoE call at 256 tokens, each pair's
expert, rebuilt from the tile table and order. Run from the repository root on the device; writes $OUT/ids256.json."""
import collections, json, os, sys, tempfile
from pathlib import Path
import torch
sys.path.insert(0, ".")
from llm import LLM
from model import ops
from model.config import GptOssConfig
calls = []
orig = ops.moe_route
def rec(x, wr, br, top_k, block_m, one=False):
    r = orig(x, wr, br, top_k, block_m, one)
    if x.shape[0] == 256 and len(calls) < 48:
        table, order = r[0].tolist(), r[1].tolist()
        ids = [-1] * (256 * top_k)
        for e, r0, r1 in zip(*table):
            for row in range(r0, r1) if e >= 0 else ():
                ids[order[row]] = e
        calls.append(ids)
    return r
ops.moe_route = rec
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
eng = LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=256, cuda_graphs=False)
gen = torch.Generator().manual_seed(0)
prompts = [torch.randint(0, 199_000, (128,), generator=gen).tolist() for _ in range(256)]
eng.generate(prompts, max_tokens=24, ignore_eos=True).result()
eng.stop()
for ids in calls[:24]:
    c = sorted(collections.Counter(ids).values(), reverse=True)
    print(len(c), "experts; pairs", c[:6], "...", c[-3:], "| -1:", ids.count(-1))
Path(os.environ.get("OUT", "."), "ids256.json").write_text(json.dumps(calls))
