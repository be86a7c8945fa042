"""bf16 engine vs the float32 reference model on the tiny random checkpoint, fed in chunks of C tokens (C <= 16
takes the split-K linear's partials, C = 1 the decode path), so a change to bf16 rounding can be compared between
two trees (a check, not a test; runs on the GPU, or on the CPU interpreter, whose bf16 casts truncate):

    python cookbook/precision_bf16.py . 1; python cookbook/precision_bf16.py path/to/other/tree 1
"""
import json
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
import conftest  # noqa: E402,F401  (the interpreter's bf16 dot shim on the CPU)
from helpers import load_checkpoint_tensors  # noqa: E402
from model.config import GptOssConfig, tiny_config  # noqa: E402
from model.gpt_oss import GptOss, KVCache, StepInputs  # noqa: E402
from model.weights import load_weights, write_checkpoint  # noqa: E402
from reference import ReferenceModel  # noqa: E402


def main():
    C, T, page, dt = int(sys.argv[2]) if len(sys.argv) > 2 else 8, 96, 16, torch.bfloat16
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    d = write_checkpoint(Path(tempfile.mkdtemp()) / "tiny", tiny_config(), seed=0, shards=3)
    ref = ReferenceModel(load_checkpoint_tensors(d), json.loads((d / "config.json").read_text()))
    cfg = GptOssConfig.from_file(d / "config.json")
    model = GptOss(cfg, *load_weights(d, cfg, dev, dt), 4096, dev)
    ids = torch.randint(0, 200000, (T,), generator=torch.Generator().manual_seed(4)).tolist()
    n_slide, n_pages = sum(cfg.sliding), -(-T // page)
    cache = lambda n, rows: torch.zeros(n, rows, cfg.num_key_value_heads, cfg.head_dim, dtype=dt, device=dev)
    n_full = cfg.num_hidden_layers - n_slide
    kv = KVCache(cache(n_full, n_pages * page), cache(n_full, n_pages * page), cache(n_slide, 128),
                 cache(n_slide, 128), page)
    i32 = lambda x: torch.tensor(x, dtype=torch.int32, device=dev)
    out = []
    for s in range(0, T, C):  # one sequence, C new tokens a step after s cached ones
        pos = torch.arange(s, s + C, dtype=torch.int32, device=dev)
        inp = StepInputs(torch.tensor(ids[s:s + C], device=dev), pos, i32([0, C]), i32([s]),
                         i32([list(range(n_pages))]), i32([[0]]).expand(1, n_pages), pos, pos % 128,
                         torch.arange(C, device=dev), C)
        out.append(model.forward(inp, kv))
    got, want = torch.cat(out).cpu(), ref.logits(ids)  # [T, V]
    agree = (got.argmax(-1) == want.argmax(-1)).float().mean().item()
    print(f"{ROOT.name} ({dev}), {C}-token steps: top-1 agreement {agree:.4f}, "
          f"mean |dlogit| {(got - want).abs().mean().item():.4f}")


if __name__ == "__main__":
    main()
