"""_tiles_kernel's SASS for sm_90 with and without the % 16 facts on its size arguments (fiftieth session; no GPU).
    python docs/runs/s50/tiles_sass.py unaligned|aligned|nt [BLOCK EP BLOCK_M]
unaligned: main (A, n_tiles, stride_tt unspecialized); aligned: all three % 16; nt: n_tiles, stride_tt only
(ntiles16.patch). Pointers are 16-byte aligned in every case, as a real launch specializes them."""
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import kernels as K  # noqa: E402

mode, (block, ep, block_m) = sys.argv[1], [int(a) for a in (sys.argv[2:5] or (1024, 32, 64))]
sig = {"ids_ptr": "*i32", "order_ptr": "*i32", "table_ptr": "*i32", "A": "i32", "n_tiles": "i32", "stride_tt": "i32",
       "EP": "constexpr", "BLOCK_M": "constexpr", "BLOCK": "constexpr"}
names = list(sig)
div = [n for n in names if n.endswith("_ptr")]
div += {"aligned": ["A", "n_tiles", "stride_tt"], "nt": ["n_tiles", "stride_tt"]}.get(mode, [])
k = triton.compile(triton.compiler.ASTSource(fn=K._tiles_kernel, signature=sig,
                                             constexprs={"EP": ep, "BLOCK_M": block_m, "BLOCK": block},
                                             attrs={(names.index(n),): [["tt.divisibility", 16]] for n in div}),
                   target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4, num_stages=3))
d = Path(tempfile.mkdtemp())
(d / "k.cubin").write_bytes(k.asm["cubin"])
cuobjdump = Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump"
s = subprocess.run([str(cuobjdump), "-sass", str(d / "k.cubin")], capture_output=True, text=True).stdout
ins = [line for line in s.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", line)]
print(mode, "instructions", len(ins), "shared bytes", k.metadata.shared)
ops = collections.Counter(re.search(r"\*/\s+(@!?U?P\d\s+)?([A-Z0-9_]+)", line).group(2) for line in ins)
print(sorted(ops.items(), key=lambda x: -x[1])[:25])
ptx = k.asm["ptx"]
print("ptx: ld.global", ptx.count("ld.global"), "(v4", ptx.count("ld.global.v4"), ") st.global", ptx.count("st.global"),
      "(v4", ptx.count("st.global.v4"), ") bar.sync", ptx.count("bar.sync"))
