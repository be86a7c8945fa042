# docs/runs/s48/edge.py as it should have run: edge.py kept each stopped engine alive (`eng`) while the next one
# started, so the first (KV sized to the free memory) left no room and max_model_len 2 and 3 failed at start-up; and
# its success lines followed tqdm's '\r' on one line, which the call's grep dropped. Here each engine is freed first,
# and every line is printed on its own.
import gc, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, ".")
import torch
from llm import LLM
from model.config import tiny_config
from model.weights import write_checkpoint
d = write_checkpoint(Path(tempfile.mkdtemp()) / "tiny", tiny_config(), seed=0, shards=1)
T = "shared/data/o200k_base.tiktoken"
for kw, prompt, mt in [(dict(max_model_len=1), [1], 1), (dict(max_model_len=2), [1], 1),
                       (dict(max_model_len=3), [1, 2], 1), (dict(page_size=16, num_pages=2), [1, 2, 3], 4),
                       (dict(page_size=1, num_pages=2), [1], 1), (dict(page_size=1, num_pages=3), [1], 1)]:
    eng = first = None
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    try:
        t0 = time.perf_counter(); eng = LLM(str(d), tokenizer=T, max_slots=2, **kw)
        first, t = next(eng.ids), time.perf_counter() - t0
        out = eng.generate(prompt, max_tokens=mt, ignore_eos=True).result()
        print(f"\n{kw}: started in {t:.1f} s, next id {first}, KV {eng.kv_tokens}; "
              f"{len(prompt)}+{mt}: {len(out.token_ids)} tokens", flush=True)
    except Exception as e:
        where = f"started, next id {first}, KV {eng.kv_tokens}" if eng is not None else "start-up"
        print(f"\n{kw}: {where}: {type(e).__name__}: {e}", flush=True)
    finally:
        if eng is not None:
            eng.stop()
