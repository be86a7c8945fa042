"""Shared test fixtures' building blocks: the tiny checkpoint and the tokenizer data path."""
import json
from pathlib import Path

import pytest
from safetensors.torch import load_file

_ROOT = Path(__file__).resolve().parents[1]
# ../shared/data beside the checkout; on the GPU machine a git-ignored copy travels as shared/data
DATA = next((p for p in (_ROOT.parent / "shared" / "data", _ROOT / "shared" / "data") if p.exists()),
            _ROOT.parent / "shared" / "data")
TIKTOKEN = DATA / "o200k_base.tiktoken"
needs_data = pytest.mark.usefixtures("tokenizer_data")  # conftest: fails, not skips, when the data is missing


def require_data(*files):
    """Missing tokenizer data fails the tests that read it: as skips, ~200 tests would pass CI unrun."""
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        pytest.fail(f"tokenizer test data not found: {', '.join(missing)} (copy ../shared/data beside the checkout)")


def load_checkpoint_tensors(path):
    """All tensors of a checkpoint by HF name, found through the index like the engine does."""
    index = json.loads((Path(path) / "model.safetensors.index.json").read_text())
    out = {}
    for f in sorted(set(index["weight_map"].values())):
        out.update(load_file(str(Path(path) / f)))
    return out
