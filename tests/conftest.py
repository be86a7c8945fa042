"""Test setup: on a machine without CUDA, kernels run under the Triton interpreter on the CPU."""
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

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def device():
    return DEVICE
