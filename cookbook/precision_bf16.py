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
from model.config import tiny_config  # noqa: E402
from model.weights import write_checkpoint  # noqa: E402
from reference import ReferenceModel  # noqa: E402
from test_model import DEVICE, all_logits, build_model  # noqa: E402  (the teacher-forced tests' prefill)


def main():
    C = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    d = write_checkpoint(Path(tempfile.mkdtemp()) / "tiny", tiny_config(), seed=0, shards=3)
    ref = ReferenceModel(load_checkpoint_tensors(d), json.loads((d / "config.json").read_text()))
    ids = torch.randint(0, 200000, (96,), generator=torch.Generator().manual_seed(4)).tolist()
    got, want = all_logits(build_model(d, torch.bfloat16), ids, chunk=C).cpu(), ref.logits(ids)  # [T, V]
    agree = (got.argmax(-1) == want.argmax(-1)).float().mean().item()
    print(f"{ROOT.name} ({DEVICE}), {C}-token steps: top-1 agreement {agree:.4f}, "
          f"mean |dlogit| {(got - want).abs().mean().item():.4f}")


if __name__ == "__main__":
    main()
