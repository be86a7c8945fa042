"""As run from the repository root in the forty-seventh session (docs/runs/s47/spec_sass.txt). SASS with and without the 16-divisibility of one int argument (what do_not_specialize_on_alignment drops)."""
import re, sys, os
os.environ.pop("TRITON_INTERPRET", None)
sys.path[:0] = ["cookbook", "tests", "."]
import triton
from triton.backends.compiler import GPUTarget
import test_compile as TC
K = TC.K

def sass(fn, signature, consts, warps, stages, extra):
    attrs = {(i,): [["tt.divisibility", 16]] for i, (k, v) in enumerate(signature.items())
             if v.startswith("*") or k.startswith("stride") or k in ("N", "K") or k in extra}
    k = triton.compile(triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=stages))
    import subprocess, tempfile, pathlib
    p = pathlib.Path(tempfile.mkdtemp()) / "k.cubin"; p.write_bytes(k.asm["cubin"])
    b = pathlib.Path(triton.__file__).parent / "backends/nvidia/bin"
    out = subprocess.run([str(b / "nvdisasm"), "-c", str(p)], capture_output=True, text=True).stdout
    ins = [re.sub(r"/\*[0-9a-f]+\*/", "", l).strip() for l in out.splitlines() if re.search(r"/\*[0-9a-f]{4,6}\*/\s+\S", l)]
    return ins, k.metadata.num_regs if hasattr(k.metadata, "num_regs") else None

def cmp(name, fn, spec, consts, warps, stages, args):
    spec_d = {k: v for k, v in spec.items()}
    a, _ = sass(fn, spec, consts, warps, stages, args)   # D on args (today's launch where the size is a multiple of 16)
    b, _ = sass(fn, spec, consts, warps, stages, ())     # no D
    same = a == b
    print(f"{name}: {len(a)} vs {len(b)} instructions, identical={same}")
    if not same:
        import difflib
        d = [l for l in difflib.unified_diff(a, b, lineterm="", n=0) if l[:1] in "+-" and l[:3] not in ("+++", "---")]
        print("   ", len(d), "differing lines; first:", d[:6])

MOE_CONSTS = lambda gu, bm, bn, s: dict(ROUTE=False, KP=4, EP=16, SP=0, TOPK=4, GATE_UP=gu, LIMIT=7.0, ALPHA=1.702,
                                        BLOCK_M=bm, BLOCK_N=bn, SPLITS=s, PREC="tf32")
for gu, bm, bn, s, w in [(True, 16, 256, 1, 4), (False, 16, 256, 2, 4), (True, 64, 256, 1, 4), (False, 64, 256, 2, 4),
                         (True, 128, 256, 1, 8), (False, 128, 256, 1, 8)]:
    sig, c = TC.sig(TC.MOE, **MOE_CONSTS(gu, bm, bn, s))
    cmp(f"moe gate_up={gu} {bm}x{bn} splits={s}", K._moe_kernel, sig, c, w, 3, ("stride_tt",))
for blk in (16, 256, 1024):
    sig, c = TC.sig(TC.TILES, EP=32, BLOCK_M=16, BLOCK=blk)
    cmp(f"tiles BLOCK={blk}", K._tiles_kernel, sig, c, 4, 3, ("A", "n_tiles", "stride_tt"))
for name in ("o_proj", "o_proj_64", "router"):
    fn, sig, c = TC.CASES[name]
    cmp(name, fn, sig, c, 4, TC.STAGES.get(name, 3), ("T",))

print("--- loops")
import sass_count as SC
def loopcount(fn, sig, c, w, st, extra):
    attrs = {(i,): [["tt.divisibility", 16]] for i, (k, v) in enumerate(sig.items())
             if v.startswith("*") or k.startswith("stride") or k in ("N", "K") or k in extra}
    k = triton.compile(triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=c, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    import subprocess, tempfile, pathlib
    p = pathlib.Path(tempfile.mkdtemp()) / "k.cubin"; p.write_bytes(k.asm["cubin"])
    b = pathlib.Path(triton.__file__).parent / "backends/nvidia/bin"
    out = subprocess.run([str(b / "nvdisasm"), "-c", str(p)], capture_output=True, text=True).stdout
    return [len(l) for l in SC.loops(SC.instructions(out))]
for name in ("o_proj", "o_proj_64", "router"):
    fn, sig, c = TC.CASES[name]
    print(name, "D:", loopcount(fn, sig, c, 4, TC.STAGES.get(name, 3), ("T",)), "none:", loopcount(fn, sig, c, 4, TC.STAGES.get(name, 3), ()))
for blk in (256, 1024):
    sig, c = TC.sig(TC.TILES, EP=32, BLOCK_M=16, BLOCK=blk)
    print("tiles", blk, "D:", loopcount(K._tiles_kernel, sig, c, 4, 3, ("A", "n_tiles", "stride_tt")), "none:", loopcount(K._tiles_kernel, sig, c, 4, 3, ()), "A only:", loopcount(K._tiles_kernel, sig, c, 4, 3, ("A",)))
