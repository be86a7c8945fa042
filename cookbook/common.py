"""What the cookbook scripts share: which checkpoint to use, the tokenizer fallback, CUDA-graph timing, result rows."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def model_dir(argv):
    """(path, tiny): argv[1] if given (an error if it holds no config.json), else ./gpt-oss-20b if it holds a
    checkpoint, else a tiny random checkpoint (written once to ./checkpoints/gpt-oss-tiny; gibberish output, real
    engine). Examples generate a few tokens on the tiny one: the CPU interpreter takes about a second per token."""
    from model.config import tiny_config
    from model.weights import write_checkpoint
    path = Path(argv[1]) if len(argv) > 1 else ROOT / "gpt-oss-20b"
    if (path / "config.json").exists():
        return str(path), False
    if len(argv) > 1:  # a mistyped path must not serve the random model as if it were the one asked for
        sys.exit(f"{path}: no config.json there (a checkpoint directory holds config.json and *.safetensors)")
    path = ROOT / "checkpoints" / "gpt-oss-tiny"
    print(f"No checkpoint found: using a TINY RANDOM checkpoint at {path}. Its output is gibberish.")
    if not (path / "config.json").exists():
        write_checkpoint(path, tiny_config(), seed=0)
    return str(path), True


def tiktoken_file():
    """A checkpoint directory carries tokenizer.json; the tiny one falls back to o200k_base.tiktoken."""
    for p in (ROOT.parent / "shared/data/o200k_base.tiktoken", ROOT / "shared/data/o200k_base.tiktoken"):
        if p.exists():
            return str(p)
    return None


def graph_us(fns, reps=10):
    """us per call: every fn run once eagerly (compiles), then all captured in one CUDA graph; the median of 5
    timings of `reps` replays, divided by the calls. Distinct buffers per fn keep weights out of L2."""
    import torch
    for f in fns:
        f()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fns:
            f()
    times = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / reps / len(fns))
    return sorted(times)[2]


def emit(row, path=None):
    """Prints a result row as JSON and appends it to path (JSON lines) when one is given."""
    print(json.dumps(row), flush=True)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(row) + "\n")
