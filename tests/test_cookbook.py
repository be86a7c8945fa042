"""Every cookbook example runs as written on the tiny checkpoint, so none can rot."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import TIKTOKEN, needs_data

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


@pytest.mark.parametrize("name", ["moe_variants/moe_splitk.py", "moe_variants/moe_splitk2.py",
                                  "moe_variants/gemv_one.py", "dense_variants/gemv_splitk.py",
                                  "dense_variants/dense256.py"])
def test_variant_checks(name):
    """The kept kernel variants still match their float32 references (each asserts it), on the interpreter."""
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, str(COOKBOOK / name)], capture_output=True, text=True,
                       timeout=600, cwd=COOKBOOK.parent, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.count("rel err") >= 3, p.stdout[-2000:]


def test_profile_counts_each_stretch_of_the_stream_once():
    """profile_step.exclusive_us: a kernel launched early (PDL) that waits inside its span is charged only for
    the time after the kernel before it ends; the parts add up to the busy time of the stream."""
    sys.path.insert(0, str(COOKBOOK))
    from profile_step import exclusive_us
    ev = lambda name, ts, dur, cat="kernel": dict(ph="X", cat=cat, name=name, ts=ts, dur=dur)
    trace = dict(traceEvents=[ev("b", 8, 10), ev("a", 0, 10), ev("c", 20, 2, "gpu_memset"), ev("a", 21, 1),
                              ev("cpu_op", 0, 100, "cpu_op")])
    assert dict(exclusive_us(trace, 2)) == {"a": 5.0, "b": 4.0, "c": 1.0}  # 10 + 8 + 2 + 0 over 2 steps


@pytest.mark.parametrize("model", ["20b", "120b"])
def test_start_up_leaves_no_prefill_size_a_compile(model):
    """cookbook/compile_variants.py, offline at the real shapes (8 slots: the fewest decode graphs): after the start-up
    prompts of llm.WARM_UP, no prefill chunk of 1-600 tokens reaches a kernel specialization that start-up did not
    compile. The forty-sixth session's start-up prompts (2 tokens and the chunk) left some to a user's request."""
    run = lambda *extra: subprocess.run([sys.executable, str(COOKBOOK / "compile_variants.py"), "--model", model,
                                         "--slots", "8", "--chunk", "600", "--check", *extra], capture_output=True,
                                        text=True, timeout=600, cwd=COOKBOOK.parent)
    p = run()
    assert p.returncode == 0 and " 0 more reachable by a prefill chunk" in p.stdout, p.stdout[-3000:] + p.stderr[-3000:]
    old = run("--prompts", "2", "600")
    assert old.returncode == 1 and "_moe_kernel" in old.stdout, old.stdout[-3000:] + old.stderr[-3000:]


@pytest.mark.skipif(shutil.which("git") is None, reason="git apply checks the patches")
@pytest.mark.parametrize("patch", sorted(p.name for p in COOKBOOK.glob("patches/*.patch")))
def test_prepared_patch_applies(patch):
    """A change prepared but not yet timed on the GPU is kept as a patch: it must still apply to today's tree."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(COOKBOOK.parent.parent))  # in an outer repository, git
    p = subprocess.run(["git", "apply", "--check", str(COOKBOOK / "patches" / patch)], capture_output=True,
                       text=True, cwd=COOKBOOK.parent, env=env)  # would skip paths outside the cwd: no check
    assert p.returncode == 0, p.stderr


@needs_data
def test_ablation_stand_ins_replay_the_recorded_step(tiny_dir):
    """cookbook/ablate_step.py: with one family of ops replaced by its stand-ins, a decode step computes what the
    recorded step did, so the ops left in (the MoE above all: which experts it reads) do the real step's work."""
    import torch
    sys.path.insert(0, str(COOKBOOK))
    from ablate_step import stand_ins
    from llm import LLM
    from model import ops
    eng = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, page_size=16, max_slots=2, num_pages=64)
    try:
        eng.generate([list(range(5, 25))], max_tokens=2, ignore_eos=True).result()
        saved = {k: eng.static[k].clone() for k in ("ids", "pos", "slots", "table")}
        fakes = stand_ins(eng, 1)  # records one step, then the same step again for each family left out
        want = None
        for name in [None, "moe", "attention", "rope_kv", "add_rmsnorm", "route"]:
            for k, v in saved.items():
                eng.static[k].copy_(v)
            attr, fake = fakes[name] if name else ("moe", ops.moe)
            real = getattr(ops, attr)
            setattr(ops, attr, fake)
            try:
                logits = eng._decode_body(1, False)[1].clone()
            finally:
                setattr(ops, attr, real)
            want = logits if want is None else want
            assert torch.equal(logits, want), name
        for k, v in saved.items():  # one position further the step differs: an equality that can fail
            eng.static[k].copy_(v)
        eng.static["pos"][:1] += 1
        assert not torch.equal(eng._decode_body(1, False)[1], want)
    finally:
        eng.stop()
