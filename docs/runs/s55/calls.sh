# The fifty-fifth session's device calls, as run (2026-12-06, UTC by the sandbox's clock; outputs beside this file).
# Every call named nvidia-h200 and got an H100 80GB HBM3 machine (1,980 MHz): R (calls 1-3, started fresh by call 1),
# S (call 4, started fresh). The A/B trees came from 52fc3f3 by `ab.sh prepare` (git archive; COMMIT files
# 52fc3f3+NAME; code as at 6854d11). Three calls got no machine: ~17:44 and ~18:15 "could not be started" (~180 s
# each), ~17:52 "none asked for" (15 s); at ~18:18, with 254 s left, call 5 was refused: too little time to start
# a machine. 1,546 of 1,800 s used.
#   1 (17:57-18:00, 192 s, fresh R): bash c1_call.sh -> c1_stdout.txt, c1/ (its H100 branch: bench_moe.py --down-splits
#         1 2 3 at 8-48 tokens; 1 split won at 8 tokens by >3%, so down1lt64 against main at 20b b8, both orders)
#   2 (18:00-18:05, 249 s, R): bash c2_call.sh -> c2_stdout.txt, c2/ (upx2's GPU MoE tests; downx2, upx2 vs main, b8)
#   3 (18:05-18:08, 150 s, R): bash c3_call.sh -> c3_stdout.txt, c3/ (n256b8 vs main at b8; profile_step.py --batch 8)
#   4 (18:08-18:14, 300 s, fresh S): bash c4_call.sh -> c4_stdout.txt, c4/ (slide2's GPU attention tests; slide2 vs
#         main at b8 and b1); two jsonl files of its second order did not come back ("count"), their lines are in
#         c4_stdout.txt
#   give_back (434 s left).
#   5 (not run): bash c5_call.sh, undo1b64 vs main at 20b b96 (the batch 6854d11 changed and nobody timed); the
#         file now holds its form for ab.sh run --both (added after these calls)
# Patches (each against 52fc3f3): down1lt64.patch, down2lt64.patch (prepared, not timed: call 1 chose 1 split),
# downx2.patch, upx2.patch, n256b8.patch, slide2.patch, undo1b64.patch.
