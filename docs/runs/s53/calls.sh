# The fifty-third session's device calls, as run (2026-12-06, UTC by the sandbox's clock; outputs beside this file).
# Every call named nvidia-h200 and got an H100 80GB HBM3 machine (1,980 MHz), each started fresh: M (call 1),
# N (call 2), O (calls 3-4). Compare numbers only within a machine. The device's git reports the landed base
# (1d8d350), not the local commits; the trees that ran are named per call. Scripts ran from scratch/ (copies here).
# Twenty starts got no machine: 3 before call 1 (11:33-11:40, one naming nvidia-h100-x1), 5 before call 2
# (11:58-12:16), 12 before call 3 (12:27-13:14, one naming nvidia-h100-x1). Each cost 15 s ("not tried") to
# ~90-180 s ("could not be started"). Of the 1,569 s used, the calls' commands ran 288 s; 231 s were left.
#   1 (ended ~11:44, 67 s, fresh M; tree b2b73c6's fill_batch): bash c1_call.sh  -> c1_* (profile_step.py 20b
#         --batch 1 64 256 with the fixed fill; dense_variants/dense256.py --tokens 160 256)
#   2 (ended ~12:23, 148 s, fresh N; tree b2b73c6): bash c2_call.sh -> c2_* (bench_moe.py prefill tiles at
#         128-row tiles; the down at 288-400 tokens; profile_step.py 120b --batch 1 64 256, which stopped at b256
#         on fill_batch's assertion: the 80 GB card's KV cache holds ~140 of the 256 sequences at once)
#   Here: down128p.patch written; bash cookbook/patches/ab.sh prepare down128p (trees from b2b73c6, whose engine
#         is 1d8d350's)
#   3 (ended ~13:21, 57 s, fresh O): bash c3_call.sh (its scratch/ttft_ab.py is ttft_ab.py here): down128p's
#         test_moe_real_shapes at 2,048 tokens, then TTFT, main first                  -> c3/
#   4 (ended ~13:23, 16 s, O): bash c4_call.sh: TTFT, down128p first                   -> c4/
#   give_back (231 s left).
