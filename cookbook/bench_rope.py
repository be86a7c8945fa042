"""RoPE + KV append at prefill sizes (benchmark, not a test; needs a GPU). A prefill chunk makes two launches a layer
(model/gpt_oss.py): rotate q and k in place, then, after attention, append k and v to the cache. Timed here per
call in a CUDA graph (common.graph_us, 8 distinct buffers), against the bytes each moves:
- rotate: main's first launch; rotate+append: the same launch writing the cache too (what
  docs/runs/s39_prefill_append.patch did for full layers, whose second launch then goes);
- append all heads: main's second launch (its programs load q's 64 heads too, then store nothing of them);
  append k v heads: the same over a [T, 16, D] view, as the patch does for the sliding layers;
- rotate at 16-128 head rows a program (ops.rope_kv takes 32: three programs a token, for decode's partials).

    python cookbook/bench_rope.py docs/runs/rope_prefill.json
"""
import json
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernels as K  # noqa: E402
from common import graph_us  # noqa: E402
from model import ops  # noqa: E402
from model.config import GptOssConfig  # noqa: E402
from model.gpt_oss import yarn_cos_sin  # noqa: E402

DEV, NH, NKV, D = "cuda", 64, 8, 64


def rotate_rows(q, pos, cs, block_h):  # ops.rope_kv's rotate launch with another BLOCK_H
    K._rope_kv_kernel[(q.shape[0], triton.cdiv(NH + 2 * NKV, block_h))](
        q, q, pos, cs, q, q, q, q.stride(0), 0, q.stride(0), cs.stride(0), 0, 0, 0, NH=NH, NKV=NKV, D=D,
        BLOCK_H=block_h, SPLITS=1, STORE=True, ROTATE=True, WRITE=False, PAGE=1, launch_pdl=True)


def main(out):
    cs, res = yarn_cos_sin(GptOssConfig(), 131072, DEV), []
    for T in (1024, 4096):
        qkvs = [torch.randn(T, NH + 2 * NKV, D, device=DEV, dtype=torch.bfloat16) for _ in range(8)]  # [T, 80, D]
        pos = torch.arange(T, device=DEV, dtype=torch.int32) + 100_000
        kc, vc = (torch.zeros(2 * T, NKV, D, device=DEV, dtype=torch.bfloat16) for _ in "kv")  # [P, NKV, D]
        rows = torch.randperm(2 * T, device=DEV)[:T].to(torch.int32)
        row, kv = T * (NH + 2 * NKV) * D * 2, T * 2 * NKV * D * 2  # bytes of qkv, of its k and v
        cases = {"rotate": (lambda q: ops.rope_kv(q, NH, NKV, pos, cs), 2 * row),
                 "rotate+append": (lambda q: ops.rope_kv(q, NH, NKV, pos, cs, kc, vc, rows), 2 * row + kv),
                 "append all heads": (lambda q: ops.rope_kv(q, NH, NKV, k_cache=kc, v_cache=vc, slots=rows), row + kv),
                 "append k v heads": (lambda q: ops.rope_kv(q[:, NH:], 0, NKV, k_cache=kc, v_cache=vc, slots=rows),
                                      2 * kv)}
        cases |= {f"rotate {h} rows": (lambda q, h=h: rotate_rows(q, pos, cs, h), 2 * row) for h in (16, 32, 64, 128)}
        for name, (f, nbytes) in cases.items():
            us = graph_us([lambda q=q, f=f: f(q) for q in qkvs])
            res.append(dict(tokens=T, case=name, us=us, gb_s=nbytes / us / 1e3))
            print(f"T {T:5d}  {name:18s} {us:8.1f} us  {nbytes / us / 1e3:7.0f} GB/s", flush=True)
    if out:
        Path(out).write_text(json.dumps(dict(gpu=torch.cuda.get_device_name(), results=res), indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
