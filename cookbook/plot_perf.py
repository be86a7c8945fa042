"""Draws docs/roofline.png (each kernel family of a decode step against the measured bandwidth and bf16 MMA
roofs) and docs/decode_speed.png (decode tok/s against vLLM, SimpleLLM and the roofline) from the JSON that
profile_step.py and bench_decode.py write. Needs matplotlib (pip install matplotlib; not an engine dependency).

    python cookbook/plot_perf.py docs/runs/profile_20b.json docs/runs/bench_20b.jsonl docs/runs/bench_120b.jsonl
"""
import json
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"
MMA_TFLOPS = 790  # bf16 GEMM 8192^3 on the H200 (shared/ANCHORS.md)
OTHERS = {("20b", 1): {"vLLM 0.26 (H200)": 334, "SimpleLLM (H100)": 381},  # shared/ANCHORS.md, shared/LESSONS.md
          ("20b", 64): {"vLLM 0.26 (H200)": 9051, "SimpleLLM (H100)": 9844},
          ("120b", 1): {"SimpleLLM (H100)": 268}, ("120b", 64): {"SimpleLLM (H100)": 4780}}


def roofline(profiles):
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5.5), gridspec_kw=dict(width_ratios=[1.1, 1]))
    bw = max(p["gemv_tb_s"] for p in profiles)
    xs = [10 ** (i / 10) for i in range(-10, 31)]
    ax.plot(xs, [min(x * bw, MMA_TFLOPS) for x in xs], "k-", lw=1, label=f"roof: {bw:.2f} TB/s GEMV, {MMA_TFLOPS} TFLOP/s")
    for p, marker in zip(profiles, "os^D"):
        for r in p["rows"]:
            if r["bytes"] and r["flops"] and r["us"]:
                ai, tf = r["flops"] / r["bytes"], r["flops"] / r["us"] / 1e6
                ax.scatter(ai, tf, marker=marker, s=40)
                ax.annotate(f"{r['family'].split(' ')[0]} b{p['batch']}", (ai, tf), fontsize=7, xytext=(4, 2),
                            textcoords="offset points")
    ax.set(xscale="log", yscale="log", xlabel="FLOPs per byte read", ylabel="achieved TFLOP/s",
           title=f"gpt-oss-{profiles[0]['model']} decode step ({profiles[0]['gpu']})")
    ax.legend(fontsize=8)
    fams = [r["family"] for r in profiles[0]["rows"] if r["bytes"]]  # every family, bandwidth view
    for i, p in enumerate(profiles):
        pct = {r["family"]: r["pct_peak"] for r in p["rows"]}
        bx.barh([j + 0.4 * i for j in range(len(fams))], [pct.get(f, 0) for f in fams], 0.4,
                label=f"batch {p['batch']}: {p['graph_step_us'] / 1e3:.2f} ms/step")
    bx.set(yticks=[j + 0.2 for j in range(len(fams))], yticklabels=fams, xlim=(0, 100),
           xlabel="bytes it must read / its time, % of the measured GEMV bandwidth")
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(DOCS / "roofline.png", dpi=110)


def speed(points):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels, width = [f"{p['model']} b{p['batch']}" for p in points], 0.2
    series = {"this engine": [p["tok_s"] for p in points], "roofline": [p["roofline_tok_s"] for p in points]}
    for name in ["vLLM 0.26 (H200)", "SimpleLLM (H100)"]:
        series[name] = [OTHERS.get((p["model"], p["batch"]), {}).get(name, 0) for p in points]
    for i, (name, ys) in enumerate(series.items()):
        ax.bar([j + (i - 1.5) * width for j in range(len(points))], ys, width, label=name)
    ax.set(xticks=range(len(points)), xticklabels=labels, yscale="log", ylabel="decode tok/s (log)",
           title="decode speed, 1,000 tokens, median of 3 (H200 unless marked)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(DOCS / "decode_speed.png", dpi=120)


if __name__ == "__main__":
    profiles, points = [], []
    for f in sys.argv[1:]:
        text = Path(f).read_text()
        if f.endswith(".jsonl"):
            points += [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            profiles += json.loads(text)
    if profiles:
        roofline(profiles)
    if points:
        speed(sorted(points, key=lambda p: (p["model"] != "20b", p["batch"])))
