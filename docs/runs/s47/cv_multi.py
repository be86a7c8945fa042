# As run from the repository root in the forty-seventh session (docs/performance.md; output cv_multi.txt), 8 slots,
# against a start-up of llm.WARM_UP capped at 600: for n = 2-600, a chunk of two prompts (n // 2 and the rest), a
# later chunk of n tokens (300 cached), and a chunk of min(n, 8) one-token pieces.
import sys; sys.argv = ["x"]; sys.path.insert(0, "cookbook")
import compile_variants as CV
from unittest import mock
from types import SimpleNamespace
import llm, torch
from model import ops
from model.config import GptOssConfig, gpt_oss_120b
from triton.runtime.jit import JITFunction

def prefill_multi(e, parts, start=0):
    sp = llm.SamplingParams(max_tokens=1)
    chunk = []
    for i, n in enumerate(parts):
        r = llm.Request(i, [0] * (start + n), sp, None, slot=i, pages=list(range(1 + 40 * i, 1 + 40 * i + e._pages_for(start + n))))
        r.cached = start
        chunk.append((r, n))
    inp, _, done = e._prefill_inputs(chunk)
    e._sample(e.model.forward(inp, e.kv)[[row for _, row in done]], [r for r, _ in done])

for cfg in (GptOssConfig(), gpt_oss_120b()):
    rec = CV.Recorder()
    props = SimpleNamespace(multi_processor_count=132)
    with mock.patch.object(JITFunction, "run", lambda fn, *a, **k: rec(fn, *a, **k)), \
            mock.patch("torch.cuda.get_device_properties", lambda d: props), \
            mock.patch.object(ops, "k_splits", lambda p, d, c, f=ops.k_splits: f(p, SimpleNamespace(type="cuda"), c)):
        e = CV.engine(cfg, 8, 132)
        for B in e.buckets[::-1]:
            rec.step(lambda: llm.LLM._warm_up(e, B, False))
        for n in sorted({min(n, 600) for n in llm.WARM_UP + (600,)}):
            rec.step(lambda: CV.prefill(e, n))
        startup = set(rec.keys)
        late = set()
        for n in range(2, 601):
            late |= rec.step(lambda: prefill_multi(e, [n // 2, n - n // 2])) - startup      # two prompts in one chunk
            late |= rec.step(lambda: prefill_multi(e, [n], start=300)) - startup             # a later chunk of a long prompt
            late |= rec.step(lambda: prefill_multi(e, [1] * min(n, 8))) - startup            # one-token pieces (max_q 1)
        print(cfg.num_local_experts, "experts: late", late)
