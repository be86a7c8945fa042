# Start-up prefill's caps at their edges on the GPU (tiny checkpoint): max_model_len 1 and 2, KV of 1 and 2 pages.
import sys, tempfile, time
from pathlib import Path
sys.path.insert(0, ".")
from llm import LLM
from model.config import tiny_config
from model.weights import write_checkpoint
d = write_checkpoint(Path(tempfile.mkdtemp()) / "tiny", tiny_config(), seed=0, shards=1)
T = "shared/data/o200k_base.tiktoken"
for kw, prompt, mt in [(dict(max_model_len=1), [1], 1), (dict(max_model_len=2), [1], 1),
                       (dict(max_model_len=3), [1, 2], 1), (dict(page_size=16, num_pages=2), [1, 2, 3], 4),
                       (dict(page_size=1, num_pages=2), [1], 1), (dict(page_size=1, num_pages=3), [1], 1)]:
    try:
        t0 = time.perf_counter(); eng = LLM(str(d), tokenizer=T, max_slots=2, **kw)
    except Exception as e:
        print(f"{kw}: start-up raised {type(e).__name__}: {e}"); continue
    try:
        first = next(eng.ids)
        out = eng.generate(prompt, max_tokens=mt, ignore_eos=True).result()
        print(f"{kw}: started in {time.perf_counter() - t0:.1f} s, next id {first}, KV {eng.kv_tokens}; "
              f"{len(prompt)}+{mt}: {len(out.token_ids)} tokens")
    except Exception as e:
        print(f"{kw}: started, next id {first}, KV {eng.kv_tokens}; request raised {type(e).__name__}: {e}")
    finally:
        eng.stop()
