# The fifty-first session's device calls, as run (2026-12-06, UTC; outputs beside this file).
# Three H100 80GB HBM3 machines (1,980 MHz, 700 W limit): E (calls 1-5), F (call 6), G (calls 7-8). Compare numbers
# only within a machine. No start was refused. Both calls that named nvidia-h200 got an H100 (E).
#   Here: bash cookbook/patches/ab.sh prepare ntiles16   (trees main and ntiles16 from 414b339)
#   1 (05:51-05:59, 478 s, kind nvidia-h200, fresh E): nvidia-smi -lms 1000 logging (smi1.csv) around
#         (cd scratch/ab_ntiles16 && timeout 150 python -m pytest -q -x tests/test_kernels.py \
#              -k "moe_real_shapes or moe_route or test_moe") > pytest_ntiles16.log   (cut at 150 s: 29 passed, none failed)
#         OUT=$OUT/r1 bash cookbook/patches/ab.sh run 20b:256                  (main, ntiles16)  -> r1/
#         scratch/ab_main renamed ab_zmain; OUT=$OUT/r2 bash cookbook/patches/ab.sh run 20b:256 (ntiles16, main) -> r2/
#   2 (~06:04, 346 s, E): bash cookbook/patches/ab.sh run 20b:64 120b:64                           -> ab_*_b64.jsonl
#   3 (~06:06, 90 s, E):  bash cookbook/patches/ab.sh run 20b:1                                    -> ab_*_b1.jsonl
#         (cd scratch/ab_ntiles16 && python cookbook/profile_step.py --model 20b --batch 256 --out profile_20b_b256.json)
#   Here: ntiles16.patch applied to main (a2aa7d4). The device's git reported the landed base, so the goal files say
#   commit 414b339; the tree that ran was a2aa7d4's.
#   4 (~06:10, 220 s, kind nvidia-h200, E): timeout 200 python -m pytest -q -x tests/test_kernels.py -k "moe_real_shapes
#         or moe_route or test_moe" (42 passed in 32 s); bash docs/runs/s44_next_calls.sh 1    -> goal/bench_20b.jsonl
#   5 (~06:13, 176 s, E): bash docs/runs/s44_next_calls.sh 2                  -> goal/bench_120b.jsonl, goal/ttft_20b.jsonl
#   give_back. Here: cookbook/profile_step.py's fill_batch takes random prompts
#   6 (~06:15, 73 s, kind nvidia-h100-x1, fresh F): python cookbook/profile_step.py --model 20b --batch 64 256
#         --out profile_20b_random.json
#   7 (~06:20, 61 s, fresh G): timeout 150 python docs/runs/s51/hostgap.py (then in scratch/) -> hostgap.txt
#   8 (~06:21, 21 s, G): the same, its output through tr '\r' '\n'                           -> hostgap.txt
