"""Test setup: on a machine without CUDA, kernels run under the Triton interpreter on the CPU."""
import dataclasses
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def _patch_interpreter_bf16_dot():
    """The interpreter stores bf16 as uint16 and np.matmul would multiply the raw bits.
    Upcast bf16 operands to fp32 (exact) before the product; the GPU path is untouched."""
    from triton.runtime import interpreter as ti
    import triton.language as tl
    orig = ti.InterpreterBuilder.create_dot

    def as_f32(h):
        if h.dtype.scalar == tl.bfloat16 or h.dtype == tl.bfloat16:
            data = (h.data.astype(np.uint32) << 16).view(np.float32)
            return ti.TensorHandle(data, tl.float32)
        return h

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return orig(self, as_f32(a), as_f32(b), d, input_precision, max_num_imprecise_acc)

    ti.InterpreterBuilder.create_dot = create_dot


if os.environ.get("TRITON_INTERPRET") == "1":
    _patch_interpreter_bf16_dot()
    from triton.runtime import interpreter as _ti
    _orig_init = _ti.InterpreterBuilder.__init__

    def _init(self, *a, **k):  # skip a per-op integer-overflow check (the options are a frozen dataclass)
        _orig_init(self, *a, **k)
        self.options = dataclasses.replace(self.options, sanitize_overflow=False)

    _ti.InterpreterBuilder.__init__ = _init  # new builders (one per tensor descriptor argument)
    _ti.interpreter_builder.options = dataclasses.replace(  # and the one every launch uses, built at import
        _ti.interpreter_builder.options, sanitize_overflow=False)

    def _device_call(self, *args, **kwargs):  # a @triton.jit helper: Triton re-patches triton.language on every
        if not getattr(self, "lang_patched", False):  # call (inspect.getmembers of 3 modules, ~30% of an engine
            _ti._patch_lang(self.fn)  # step on the CPU). Once per helper is enough: those patches are never undone
            self.lang_patched = True  # for the modules only helpers reach (tl.core), and each launch patches tl
        try:
            return self.rewrite()(*args, **kwargs)
        except Exception as e:
            raise _ti.InterpreterError(repr(e)) from e

    _ti.InterpretedFunction.__call__ = _device_call

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def device():
    return DEVICE


@pytest.fixture(scope="session")
def tokenizer_data():  # helpers.needs_data: session scope, so it runs before the module-scoped engines
    from helpers import TIKTOKEN, require_data
    require_data(TIKTOKEN)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    """A tiny random checkpoint in the official layout (real vocab, 4 layers, 8 experts), written by
    the project's own writer, shared by the model and engine tests."""
    from model.config import tiny_config
    from model.weights import write_checkpoint
    return write_checkpoint(tmp_path_factory.mktemp("tiny") / "gpt-oss-tiny", tiny_config(), seed=0, shards=3)


@pytest.fixture(scope="session")
def reference_model(tiny_dir):
    import json
    from helpers import load_checkpoint_tensors
    from reference import ReferenceModel
    return ReferenceModel(load_checkpoint_tensors(tiny_dir), json.loads((tiny_dir / "config.json").read_text()))
