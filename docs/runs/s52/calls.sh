# The fifty-second session's device calls, as run (2026-12-06, UTC: when each call's outputs came back, by the
# sandbox's clock; outputs beside this file). Four H100 80GB HBM3 machines (1,980 MHz, driver 580.159.04), each
# started fresh: I (calls 0-1), J (call 2), K (calls 3-4), L (calls 5-7). Compare numbers only within a machine.
# No start was refused. Call 0 named nvidia-h200 and got an H100 (I).
# The scripts ran from scratch/s52/ (copies here). 1,645 of the 1,800 s were used.
#   0 (ended 08:29, 50 s, fresh I): bash call1.sh; tilestats256.py (4 tokens) recorded no 256-token step: prefill and
#         decode take turns, so with 4 tokens the batch never reached 256. moe256.py failed on the empty file.
#   1 (ended 08:30, 48 s, I): tilestats256.py with 24 tokens, then call1.sh -> c1_ids256.json, c1_moe256.jsonl,
#         c1_ncu_moe256.txt (ncu on the engine's b256 routing: gate_up and down, one launch each after warm-up)
#   2 (ended 08:32, 105 s, fresh J): bash call2.sh                                       -> c2_bench_moe.txt (stdout)
#   Here: down128.patch written; bash cookbook/patches/ab.sh prepare down128 (trees from 6acd7bb)
#   3 (ended 08:35, 319 s, fresh K): bash call3.sh (down128 before main: alphabetical) -> c3_r1/,
#         c3_pytest_down128.log
#   Here: scratch/ab_down128 renamed ab_zdown128
#   4 (ended 08:41, 230 s, K): bash call4.sh (main first), tiles_bench.py                -> c4_r2/, c3_c4_stdout.txt
#   Here: down128 merged (4bd6fa7); tiles256.patch written; ab.sh prepare tiles256 (trees from 4bd6fa7)
#   5 (ended 08:47, 263 s, fresh L): bash call5.sh: tiles_bench2.py, tiles256's GPU routing tests, A/B main first -> c5/
#   Here: tiles256 capped at 4,096 pairs (the same block at 1,024); ab.sh prepare tiles256; ab_main renamed ab_zmain
#   6 (ended 08:52, 134 s, L): bash call6.sh (tiles256 first)                            -> c6/
#   Here: tiles256.patch applied to the working tree (committed after as 7a9821c)
#   7 (ended 08:54, 200 s, L): bash docs/runs/s44_next_calls.sh 1 -> goal/ (the files say 6acd7bb,
#         the device's view of the landed base; the tree was 7a9821c's)
#   give_back (155 s left). Stdout of calls 3-7: c3_c4_stdout.txt, c5_c6_stdout.txt
