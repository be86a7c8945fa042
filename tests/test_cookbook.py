"""Every cookbook example runs as written on the tiny checkpoint, so none can rot."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import needs_data

COOKBOOK = Path(__file__).resolve().parents[1] / "cookbook"
EXAMPLES = {"quickstart.py": "ttft", "chat.py": "[high] answer:", "streaming.py": "finish:",
            "function_calling.py": "answer:", "batch_throughput.py": "output tok/s", "score_prompts.py": "perplexity"}


@needs_data
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name):
    p = subprocess.run([sys.executable, str(COOKBOOK / name)], capture_output=True, text=True, timeout=900,
                       cwd=COOKBOOK.parent)
    assert p.returncode == 0, p.stderr[-3000:]
    assert EXAMPLES[name] in p.stdout, p.stdout[-2000:]


@pytest.mark.parametrize("name", ["moe_splitk.py", "moe_splitk2.py"])
def test_moe_variant_checks(name):
    """The kept MoE variants still match the float32 reference (each asserts it), on the interpreter."""
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, str(COOKBOOK / "moe_variants" / name)], capture_output=True, text=True,
                       timeout=600, cwd=COOKBOOK.parent, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.count("rel err") >= 3, p.stdout[-2000:]
