# As run in the forty-sixth session from scratch/ (call 1 used the version before the timing and "scored again" rows).
# 20b dummy, default graphs: what a prompt_logprobs prefill (1,024-row chunks of [rows, V] fp32 logits + log_softmax)
# takes over the ready engine, against a plain prompt; then whether the engine still serves after it.
import json, sys, tempfile, random, time
from pathlib import Path
import torch
sys.path.insert(0, ".")
import llm
from model.config import GptOssConfig
G = 2 ** 30
d = Path(tempfile.mkdtemp()); (d / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
slots, chunk, util = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
eng = llm.LLM(str(d), load_format="dummy", tokenizer="shared/data/o200k_base.tiktoken", max_slots=slots,
              prefill_chunk=chunk, gpu_memory_utilization=util)
torch.cuda.synchronize()
free0, total = torch.cuda.mem_get_info(); base, res0 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
reserve = chunk * (128 << 10) + slots * (4 << 20)
print(f"slots={slots} chunk={chunk} util={util}: ready free {free0 / G:.2f} of {total / G:.2f} GiB, allocated "
      f"{base / G:.2f}, reserved {res0 / G:.2f}, KV {eng.kv_tokens} tokens, reserve {reserve / G:.2f} GiB", flush=True)
random.seed(0)
ids = [random.randrange(1000, 100000) for _ in range(4096)]
for label, kw in (("plain 4096", {}), ("scored 4096", {"prompt_logprobs": 1}), ("scored again", {"prompt_logprobs": 1}), ("plain after", {})):
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    try:
        out = eng.generate(ids, max_tokens=4, **kw).result(timeout=120)
        ok = f"ok in {time.perf_counter() - t0:.3f} s ({len(out.token_ids)} tokens" + (
            f", {len(out.prompt_logprobs)} prompt logprobs)" if kw else ")")
    except Exception as e:
        ok = f"FAILED {type(e).__name__}: {str(e)[:160]}"
    torch.cuda.synchronize(); free, _ = torch.cuda.mem_get_info()
    print(f"  {label}: {ok}; peak allocated over ready {(torch.cuda.max_memory_allocated() - base) / G:.3f} GiB, "
          f"reserved {torch.cuda.memory_reserved() / G:.2f}, free {free / G:.2f}", flush=True)
eng.stop()
