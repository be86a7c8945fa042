# The fifty-fourth session's device calls, as run (2026-12-06, UTC by the sandbox's clock; outputs beside this file).
# Every call named nvidia-h200 and got an H100 80GB HBM3 machine (1,980 MHz), each started fresh: P (call 1), Q (calls
# 2-3). The A/B trees came from 69d79ec by `ab.sh prepare` (git archive; COMMIT files 69d79ec+NAME). Fifteen calls
# got no machine (~14:53-15:47 before call 1: eleven; ~16:03-16:25 before call 2: four), eleven of them "could not
# be started" (90-180 s each), four "none asked for" (15 s each); one (~16:01, c2_call.sh) got a machine that was
# taken back before its command ended (122 s, nothing returned). 1,647 of 1,800 s used; commands 254.4 s.
#   1 (16:00, 27 s, fresh P; tree 69d79ec): bash c1_call.sh  -> c1_stdout.txt, c1_moe64.jsonl, c1_gpu.txt (its H100
#         branch: bench_moe.py at 64 tokens, tiles 128/256 columns, the down at 1-3 K splits)
#   Here: down1b64.patch written (the down at 1 split from 64 tokens); bash cookbook/patches/ab.sh prepare down1b64
#   2 (16:27-16:30, 195 s, fresh Q): bash c2_call.sh -> c2/ (20b b64, main first as "amain", then down1b64 first)
#   3 (16:31, 33 s, Q; -> c3_pytest.txt): cd scratch/ab_down1b64 && ln -sfn ../../shared shared &&
#         timeout 150 python -m pytest -q -x tests/test_kernels.py -k "moe_real_shapes or moe_route"
#         -> 16 passed, 140 deselected in 27.91s
#   give_back (153 s left).
