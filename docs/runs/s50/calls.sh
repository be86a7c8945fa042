# The fiftieth session's device calls, as run (2026-12-06, UTC; outputs beside this file, named callN_*).
# Four H100 80GB HBM3 machines (1,980 MHz, 700 W limit), one after another: A (calls 1-2), B (3-4), C (6-8), D (9).
# Compare numbers only within a machine.
#   1 (03:49, 198 s, kind nvidia-h200: an H100 came): bash docs/runs/s44_next_calls.sh 1   -> bench_20b.jsonl, gpu.txt
#   2 (03:53, 170 s, same machine):                   bash docs/runs/s44_next_calls.sh 2   -> bench_120b.jsonl,
#                                                                                             ttft_20b.jsonl
#   Here: down_ids.patch (docs/runs/s50_down_ids.patch) in cookbook/patches/, bash cookbook/patches/ab.sh prepare
#   3 (~04:03, 232 s, fresh machine): (cd scratch/ab_down_ids && timeout 150 python -m pytest -q -x \
#         tests/test_kernels.py -k "moe_real_shapes or moe_route or test_moe") > pytest_down_ids.log;
#         bash cookbook/patches/ab.sh run 20b:1      (main, down_ids; a third tree, down_ids20, hidden: not run)
#   4 (same machine, 54 s): scratch/ab_down_ids renamed ab_zdown_ids (main first); bash cookbook/patches/ab.sh run 20b:1
#   -  (~04:09) run(kind="nvidia-h100-x1", "python cookbook/profile_step.py --model 20b --batch 256 ..."):
#         no machine started (90 s)
#   Here: ab.sh prepare (main only); git archive 0da4216 (the forty-fifth session's H100 table) into scratch/ab_s45
#   6 (04:11, 320 s, fresh machine): nvidia-smi -lms 1000 logging (call6_smi.csv) around
#         bash cookbook/patches/ab.sh run 20b:256 20b:256          (main, s45; twice)
#   7 (04:16, 118 s, same machine): scratch/ab_align16 = HEAD + docs/runs/s47_align16.patch; nvidia-smi logging
#         (call7_smi2.csv) around bash cookbook/patches/ab.sh run 20b:256     (align16, main)
#   8 (~04:19, 177 s, same machine): scratch/ab_al_tiles, ab_al_lin = HEAD with only _tiles_kernel's, only
#         _linear_kernel's do_not_specialize_on_alignment dropped; bash cookbook/patches/ab.sh run 20b:256
#   Here: cookbook/patches/ntiles16.patch; ab.sh prepare (main, ntiles16)
#   9 (~04:26, fresh machine, cut at 152 s when the session's device time ran out): bash cookbook/patches/ab.sh run
#         20b:256: main only (call9_ab_main_20b_b256.jsonl); ntiles16 not reached
