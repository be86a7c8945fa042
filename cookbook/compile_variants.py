"""Which Triton compiles a step of each size needs, and which of them start-up leaves to a user's request
(analysis, not a test; no GPU). A kernel compiles once per specialization: its constexprs, its launch options, and
for every int argument whether it is 1 or a multiple of 16 (Triton's default), and a pointer's 16-byte alignment.
On a fresh machine (an empty Triton cache) each new one costs seconds inside `step()`, and every stream waits.

The engine's own code runs here on meta tensors of the real shapes (2 layers: one sliding, one full) with every
kernel launch replaced by its cache key, made by Triton's own binder for sm_90 (the code takes its CUDA branches:
tensors say `is_cuda`, and the GPU has --sms multiprocessors). Start-up is what `LLM.__init__` runs: each decode
bucket's warm-up, then the start-up prompts; then every prefill chunk of 1..CHUNK tokens and the first sampled decode
step of each bucket are checked against it. --compile compiles the keys for sm_90 here and times them.

    python cookbook/compile_variants.py --model 20b --slots 8 256 1024
    python cookbook/compile_variants.py --model 120b --slots 256 --prompts 2 8192   # other start-up sizes
"""
import argparse
import dataclasses
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

os.environ["TRITON_INTERPRET"] = "0"  # kernels stay JITFunctions: their launches are what is recorded
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.backends.nvidia.compiler import CUDABackend  # noqa: E402
from triton.runtime.jit import JITFunction, create_function_from_signature  # noqa: E402

import llm  # noqa: E402
from model import ops  # noqa: E402
from model.config import GptOssConfig, gpt_oss_120b  # noqa: E402
from model.gpt_oss import GptOss, KVCache  # noqa: E402
from model.weights import load_weights  # noqa: E402

BACKEND, META = CUDABackend(GPUTarget("cuda", 90, 32)), torch.device("meta")


class CPUGenerator(GEN := torch.Generator):  # load_weights' dummy draw, on the CPU's generator: meta has none
    def __new__(cls, device=None):
        return GEN.__new__(cls)

    def __init__(self, device=None):
        GEN.__init__(self)


class Recorder:
    """Stands in for JITFunction.run: adds (kernel, specialization, options) to `keys`, launches nothing."""
    def __init__(self):
        self.keys, self.binders, self.launches = set(), {}, {}

    def __call__(self, fn, *args, grid, warmup, **kw):
        if fn not in self.binders:
            self.binders[fn] = create_function_from_signature(fn.signature, fn.params, BACKEND)
        bound, spec, opts = self.binders[fn](*args, **kw)
        key = (fn.fn.__name__, repr(spec), repr(sorted(opts.items())))
        self.keys.add(key)
        self.launches.setdefault(key, (fn, bound, spec, kw))

    def compile_s(self, key):
        """Seconds to compile one specialization for sm_90 on this CPU (what run() would do on a cache miss)."""
        fn, bound, spec, kw = self.launches[key]
        opts, sig, consts, attrs = fn._pack_args(BACKEND, kw, bound, spec, {})
        t = time.perf_counter()
        triton.compile(triton.compiler.ASTSource(fn, sig, consts, attrs), target=BACKEND.target, options=opts.__dict__)
        return time.perf_counter() - t

    def step(self, run):  # the keys one call of run() reaches
        before, self.keys = self.keys, set()
        run()
        new, self.keys = self.keys, before | self.keys
        return new


def engine(cfg, slots, page=256):
    """A namespace that LLM's methods run on: 2 layers of dummy meta weights, a meta KV cache and the static rows."""
    cfg = dataclasses.replace(cfg, num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"])
    with mock.patch("torch.Generator", CPUGenerator):  # a CPU generator draws meta tensors
        glob, layers = load_weights(None, cfg, META, torch.bfloat16, dummy=True)
    e = SimpleNamespace(cfg=cfg, device=META, max_slots=slots, page=page, max_model_len=cfg.max_position_embeddings)
    e.model = GptOss(cfg, glob, layers, 16384, META)
    cache = lambda rows: torch.empty(1, rows, cfg.num_key_value_heads, cfg.head_dim, device=META, dtype=torch.bfloat16)
    e.kv = KVCache(cache(64 * page), cache(64 * page), cache((slots + 1) * 128), cache((slots + 1) * 128), page)
    e.tables = torch.zeros(slots + 1, cfg.max_position_embeddings // page, device=META, dtype=torch.int32)
    for name in ("_decode_body", "_splits", "_pages_for", "_prefill_inputs", "_sample"):
        setattr(e, name, getattr(llm.LLM, name).__get__(e))
    llm.LLM._static_buffers(e)
    return e


def prefill(e, n):
    """A prompt's prefill chunk of n tokens, and its first token sampled eagerly, as LLM._prefill does."""
    sp = llm.SamplingParams(max_tokens=1)
    r = llm.Request(0, [0] * n, sp, None, slot=0, pages=list(range(1, e._pages_for(n) + 1)))
    inp, _, done = e._prefill_inputs([(r, n)])
    e._sample(e.model.forward(inp, e.kv)[[row for _, row in done]], [r])


def ranges(ns):
    """[3, 4, 5, 9] -> '3-5, 9'"""
    out, ns = [], sorted(ns)
    for n in ns:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in out)


def report(cfg, slots, chunk, prompts, sms, compile_=False):
    rec, prompts = Recorder(), sorted({min(n, chunk) for n in prompts})
    props = SimpleNamespace(multi_processor_count=sms)
    with mock.patch.object(JITFunction, "run", lambda fn, *a, **k: rec(fn, *a, **k)), \
            mock.patch.object(torch.Tensor, "is_cuda", property(lambda t: True)), \
            mock.patch("torch.cuda.get_device_properties", lambda d: props), \
            mock.patch.object(ops, "k_splits", lambda p, d, c, f=ops.k_splits: f(p, SimpleNamespace(type="cuda"), c)):
        e = engine(cfg, slots)
        for B in e.buckets[::-1]:  # start-up: LLM.__init__'s graph warm-ups, then the start-up prompts
            rec.step(lambda: llm.LLM._warm_up(e, B, False))
        for n in prompts:
            rec.step(lambda: prefill(e, n))
        startup, late = set(rec.keys), defaultdict(list)  # late: key -> the step sizes that compile it
        for n in range(1, chunk + 1):
            for key in rec.step(lambda: prefill(e, n)) - startup:
                late[key].append(n)
        sampled = set().union(*(rec.step(lambda: llm.LLM._warm_up(e, B, True)) for B in e.buckets)) - startup
    kernels = defaultdict(list)  # kernel name -> its late keys
    for key in late:
        kernels[key[0]].append(key)
    hit = set().union(*late.values()) if late else set()
    print(f"{slots} slots, {chunk}-token chunks, start-up prompts {ranges(prompts)}: {len(startup)} compiles at "
          f"start-up; {len(late)} more reachable by a prefill chunk, at {len(hit)} of its {chunk} sizes")
    for name, keys in sorted(kernels.items()):
        print(f"  {name}: {len(keys)} at sizes {ranges(set().union(*(late[k] for k in keys)))}")
    print(f"  first sampled decode step: {len(sampled)} more ({', '.join(sorted({k[0] for k in sampled})) or '-'})")
    if compile_:  # the start-up's compiles, then those it leaves to users' requests
        s, up = {k: rec.compile_s(k) for k in late}, sum(rec.compile_s(k) for k in startup)
        print(f"  compiling (sm_90, this CPU): start-up's {up:.1f} s, the rest {sum(s.values()):.1f} s (" + ", ".join(
            f"{n} {sum(s[k] for k in keys):.1f}" for n, keys in sorted(kernels.items())) + ")")
    return late


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="20b", help="20b, 120b or a checkpoint directory (its config.json)")
    ap.add_argument("--slots", type=int, nargs="+", default=[8, 64, 256, 1024])
    ap.add_argument("--chunk", type=int, default=8192, help="prefill_chunk")
    ap.add_argument("--prompts", type=int, nargs="*", default=None,
                    help="start-up prompt sizes (default: the engine's, as LLM.__init__ computes them)")
    ap.add_argument("--sms", type=int, default=132, help="H100 SXM and H200: 132")
    ap.add_argument("--check", action="store_true", help="exit 1 if a prefill chunk compiles after start-up")
    ap.add_argument("--compile", action="store_true", help="time compiling what start-up leaves (sm_90, offline)")
    args = ap.parse_args()
    if args.compile:  # time compiles, not cache hits
        os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    cfg = {"20b": GptOssConfig, "120b": gpt_oss_120b}.get(args.model, lambda: GptOssConfig.from_file(
        Path(args.model) / "config.json"))()
    late = 0
    for slots in args.slots:
        prompts = args.prompts if args.prompts is not None else [*llm.WARM_UP, args.chunk]  # as LLM.__init__
        late += len(report(cfg, slots, args.chunk, prompts, args.sms, args.compile))
    sys.exit(1 if args.check and late else 0)


if __name__ == "__main__":
    main()
