"""Instructions per weight byte of the MoE kernel's main loop, from the SASS, without a GPU: Triton's wheel
carries ptxas and nvdisasm. Counts by pipe (ALU: logic, shifts, byte permutes; FMA: IMAD, FFMA, HMUL2; MEM:
loads and stores). At ~4.8 ALU ops per byte an H200 SM can keep up with 3.5 TB/s. A tool, not a test.

    python cookbook/sass_count.py                # every kernel: instructions, registers, spills
    python cookbook/sass_count.py --moe 16 128 4 3   # BLOCK_M BLOCK_N warps stages: the loop, per byte
    python cookbook/sass_count.py --attention 16 64 8 3 0  # prefill BLOCK_T BLOCK_N warps stages register cap
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import test_compile as TC  # noqa: E402  (the kernels' signatures at the 20b shapes)

PIPES = dict(ALU="LOP3 SHF PRMT IADD3 ISETP SEL LEA SGXT VIMNMX F2FP VIADD FSEL FSETP PLOP3 IMNMX".split(),
             FMA="IMAD FFMA FMUL FADD HMUL2 HFMA2 HADD2 IMUL".split(), MEM="LDS STS LDG LDSM STG LDGSTS".split())


def sass(fn, signature, consts, warps, stages, maxnreg=0):
    sig = {k: v for k, v in signature.items() if v != "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i, (k, v) in enumerate(signature.items())
             if v.startswith("*") or k.startswith("stride") or k in ("N", "K")}  # as a real launch specializes
    k = triton.compile(triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=warps, num_stages=stages, **dict(maxnreg=maxnreg) if maxnreg else {}))
    path = Path(tempfile.mkdtemp()) / "k.cubin"
    path.write_bytes(k.asm["cubin"])
    (path.parent / "k.ptx").write_text(k.asm["ptx"])
    bin_ = Path(triton.__file__).parent / "backends/nvidia/bin"
    v = subprocess.run([str(bin_ / "ptxas"), "-arch=sm_90a", "-v", str(path.parent / "k.ptx"), "-o", "/dev/null"],
                       capture_output=True, text=True).stderr
    regs = int(re.search(r"Used (\d+) registers", v).group(1))  # what decides the programs an SM holds
    return subprocess.run([str(bin_ / "nvdisasm"), "-c", str(path)], capture_output=True, text=True).stdout, regs


def instructions(text):
    """[(label or None, opcode)] in program order."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s*(\.L_x_\d+):", line)
        if m:
            out.append((m.group(1), None))
            continue
        m = re.search(r"/\*[0-9a-f]{4,6}\*/\s+(?:@!?U?P\w+\s+)?(WARPGROUP\.\w+|[A-Z][A-Z0-9_]*)[^;]*;", line)
        if m:
            out.append((line.split("BRA")[-1].strip(" `();") if "BRA" in line else None, m.group(1)))
    return out


def loops(ins):
    """The opcodes of each backward-branch loop, in program order."""
    at, ops = {}, []
    for lab, op in ins:
        if op is None:
            at[lab] = len(ops)
        else:
            ops.append((lab, op))
    return [[o for _, o in ops[at[t]:i + 1]] for i, (t, op) in enumerate(ops) if op == "BRA" and at.get(t, i + 1) <= i]


def main_loop(ins):
    """Opcode counts of the longest backward-branch loop."""
    return collections.Counter(max(loops(ins), key=len, default=[]))


def under_mma(loop):
    """Per HGMMA group (its first HGMMA to its wait, or to the loop's end): the MUFU ops issued while it may run."""
    out, n = [], None
    for op in loop:
        n = 0 if op == "HGMMA" and n is None else n
        if op == "WARPGROUP.DEPBAR" and n is not None:
            out, n = out + [n], None
        n = n + (op == "MUFU") if n is not None else None
    return out + ([f"{n} to the loop's end"] if n is not None else [])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--moe", nargs=4, type=int, metavar=("BLOCK_M", "BLOCK_N", "WARPS", "STAGES"))
    ap.add_argument("--attention", nargs=5, type=int, metavar=("BLOCK_T", "BLOCK_N", "WARPS", "STAGES", "MAXNREG"))
    a = ap.parse_args()
    if a.attention:  # the full layer's prefill: its loops (cache / chunk keys, whole / masked tiles), 64-key tiles
        bt, bn, warps, stages, cap = a.attention  # cap 0: ptxas's own choice
        fn, signature, consts = TC.CASES["attn_prefill_full"]
        text, regs = sass(fn, signature, dict(consts, BLOCK_T=bt, BLOCK_N=bn), warps, stages, cap)
        print(f"prefill attention BLOCK_T {bt}, BLOCK_N {bn}, {warps} warps, {stages} stages, cap {cap}: {regs} "
              f"registers, "
              f"{sum(op == 'STL' for _, op in instructions(text))} spill store instructions (stride_bp as a multiple of 16; "
              "a launch has 1)")
        for loop in loops(instructions(text)):
            print(f"  loop of {len(loop)}: MUFU {loop.count('MUFU')}, HGMMA {loop.count('HGMMA')}, "
                  f"MUFU under each HGMMA group {under_mma(loop)}")
    elif a.moe:
        bm, bn, warps, stages = a.moe
        fn, signature, consts = TC.CASES["moe_True_16"]
        text, regs = sass(fn, signature, dict(consts, BLOCK_M=bm, BLOCK_N=bn), warps, stages)
        loop = main_loop(instructions(text))
        nbytes = bn * 64 // 2 + bn * 2  # one 64-feature step: codes + scales
        per = lambda names: sum(loop[o] for o in names) * warps * 32 / nbytes
        print(f"gate_up BLOCK_M {bm} BLOCK_N {bn}, {warps} warps, {stages} stages: {sum(loop.values())} instructions "
              f"per step = {sum(loop.values()) * warps * 32 / nbytes:.2f} per byte, {regs} registers; "
              + ", ".join(f"{p} {per(o):.2f}" for p, o in PIPES.items()))
        print("  ", loop.most_common(12))
    else:
        for name, (fn, signature, consts) in TC.CASES.items():
            text, regs = sass(fn, signature, consts, TC.WARPS.get(name, 4), TC.STAGES.get(name, 3))  # as launched
            ops = collections.Counter(op for _, op in instructions(text) if op)
            print(f"{name:17s} {sum(ops.values()):6d} instructions, {regs:3d} registers, {ops['STL']} spill stores, "
                  f"{ops['LDL']} loads")
