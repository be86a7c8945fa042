"""What each part of a decode step costs inside the CUDA graph (benchmark, not a test), dummy weights on the GPU.

The eager profile (profile_step.py) adds up kernels one at a time; in the graph, programmatic dependent launch
overlaps each kernel's start with the one before (the projections stream weights above their wait), so a
kernel's own time is not what the step loses to it. Here the step is re-captured with one family of ops
replaced by a stand-in that launches nothing and hands back what the op returned in a recorded eager step, and the
replay time is compared with the full step's: the difference is what the step pays for that family on its
critical path. The routing downstream stays the real step's, so the MoE reads the same experts.

    python cookbook/ablate_step.py --model 20b --batch 1 64 --out ablate.json
"""
import itertools
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "cookbook"))
from model import ops  # noqa: E402
from profile_step import dummy_engine, fill_batch  # noqa: E402


RECORDED = ("moe", "attention", "rope_kv", "add_rmsnorm", "moe_route")


def record(eng, B):
    """One eager decode step of B rows: {op: its outputs in call order}, copies the stand-ins hand back."""
    real, rec = {n: getattr(ops, n) for n in RECORDED}, {n: [] for n in RECORDED}
    copy = lambda o: tuple(t.clone() for t in o) if isinstance(o, tuple) else o.clone()
    wrap = lambda n: lambda *a, **k: rec[n].append(copy(real[n](*a, **k))) or rec[n][-1]
    try:
        for n in RECORDED:
            setattr(ops, n, wrap(n))
        eng._decode_body(B, False)
    finally:
        for n, f in real.items():
            setattr(ops, n, f)
    return rec


def stand_ins(eng, B):
    """{name: (ops attribute, a function with its signature that launches nothing or less)}. Each hands back what
    the real op returned in a recorded step, in call order, so what the step does downstream (above all which
    experts the MoE reads) stays that of the real step. A capture calls each op as often as the eager step (its
    warm-up runs one whole step first), so the cycle starts at layer 0 both times."""
    rec, gemm = record(eng, B), ops._moe_gemm  # argument 9 of _moe_gemm is gate_up
    replay = lambda outs: (lambda it: lambda *a, **k: next(it))(itertools.cycle(outs))
    fakes = {n: (n, replay(rec[n])) for n in RECORDED if n != "moe_route"}
    return {**fakes, "route": ("moe_route", replay(rec["moe_route"])),
            "gate_up": ("_moe_gemm", lambda *a, **k: None if a[9] else gemm(*a, **k)),
            "down": ("_moe_gemm", lambda *a, **k: gemm(*a, **k) if a[9] else None),
            "gate_up+down": ("_moe_gemm", lambda *a, **k: None)}


ABLATIONS = [(), ("moe",), ("attention",), ("rope_kv",), ("add_rmsnorm",), ("attention", "rope_kv", "add_rmsnorm"),
             ("moe", "attention", "rope_kv", "add_rmsnorm"),  # projections, lm_head and argmax alone
             # inside ops.moe, on fixed tables: the down reads them above its PDL wait, which is safe only while
             # they are two launches old (kernels._moe_kernel), so a gate_up left out needs them fixed
             ("route",), ("route", "gate_up"), ("route", "down"), ("route", "gate_up+down")]


def replay_us(eng, B, saved, reps=30):
    """Capture the greedy decode graph of B rows as the engine does, restore the batch's inputs, time replays."""
    g = eng._capture(B, False)  # its warm-up points the static rows at the scratch slot
    for k, v in saved.items():
        eng.static[k].copy_(v)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        g.replay()
    times = []
    for _ in range(3):  # median of 3 timed runs of `reps` replays
        start.record()
        for _ in range(reps):
            g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / reps * 1e3)
        for k, v in saved.items():  # replays advance positions: each run starts at the same context
            eng.static[k].copy_(v)
    return sorted(times)[1]


def ablate_batch(eng, B, ctx):
    Bp = fill_batch(eng, B, ctx)
    saved = {k: eng.static[k].clone() for k in ("ids", "pos", "slots", "table")}
    fakes = stand_ins(eng, Bp)
    for k, v in saved.items():  # the recorded step advanced the positions
        eng.static[k].copy_(v)
    real = {attr: getattr(ops, attr) for attr, _ in fakes.values()}
    rows = []
    for removed in ABLATIONS:
        try:
            for k in removed:
                setattr(ops, *fakes[k])
            us = replay_us(eng, Bp, saved)
        finally:
            for k, f in real.items():
                setattr(ops, k, f)
        rows.append(dict(removed=list(removed), step_us=us))
        print(f"  without {', '.join(removed) or '(nothing)':40s} {us:8.1f} us/step", flush=True)
    base = rows[0]["step_us"]
    for r in rows:
        r["saved_us"] = base - r["step_us"]
    eng.graphs[(Bp, False)] = eng._capture(Bp, False)  # the real graph back
    return dict(batch=B, padded_batch=Bp, context=ctx, rows=rows)


def main():
    a, cfg, eng = dummy_engine(__doc__)
    results = []
    for B in a.batch:
        r = dict(ablate_batch(eng, B, a.context), model=a.model, gpu=torch.cuda.get_device_name())
        results.append(r)
        print(f"== {a.model} batch {B} (graph {r['padded_batch']}), context {a.context}, "
              f"{cfg.num_hidden_layers} layers: graph replay, median of 3 x 30")
        for row in r["rows"]:
            print(f"  without {', '.join(row['removed']) or '(nothing)':40s} saves {row['saved_us']:7.1f} us = "
                  f"{row['saved_us'] / cfg.num_hidden_layers:5.2f} us a layer")
    eng.stop()
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
