# The fifty-third session's device calls, as run (2026-12-06, UTC by the sandbox's clock; outputs beside this file).
# Every call named nvidia-h200; the two that ran got H100 80GB HBM3 machines (1,980 MHz), each started fresh:
# M (call 1) and N (call 2). Compare numbers only within a machine. The device's git reports the landed base
# (1d8d350), not the local commits; the trees that ran are named per call. Scripts ran from scratch/ (copies here).
# Twenty starts got no machine: 3 before call 1 (11:33-11:40, one naming nvidia-h100-x1), 5 before call 2
# (11:58-12:16), 12 for call 3 (12:27-13:14, one naming nvidia-h100-x1). Each cost 15 s ("not tried") to ~90-180 s
# ("could not be started"): ~810 s in all. The two calls held machines 640 s; 348 s were left at the end.
#   1 (ended ~11:44, 67 s, fresh M; tree b2b73c6's fill_batch): bash c1_call.sh  -> c1_* (profile_step.py 20b
#         --batch 1 64 256 with the fixed fill; dense_variants/dense256.py --tokens 160 256)
#   2 (ended ~12:23, 148 s, fresh N; tree b2b73c6): bash c2_call.sh -> c2_* (bench_moe.py prefill tiles at
#         128-row tiles; the down at 288-400 tokens; profile_step.py 120b --batch 1 64 256, which stopped at b256
#         on fill_batch's assertion: the 80 GB card's KV cache holds ~140 of the 256 sequences at once)
#   3 (never ran: every start refused; 348 s left): c3_call.sh with ttft_ab.py -- down128p's GPU MoE tests
#         (test_moe_real_shapes at 256 and 2,048 tokens), then one engine per tree (main, down128p), TTFT medians
#         of 5 prompts at 1,536 / 2,048 / 3,072 / 4,096 / 8,192 tokens. Trees: bash cookbook/patches/ab.sh prepare
#         down128p (from b2b73c6).
