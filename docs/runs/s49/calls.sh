# The forty-ninth session's device calls, as run (2026-12-06, UTC; outputs beside this file, call 5's in call5/).
# Here first: bash cookbook/patches/ab.sh prepare align16; git archive 6376002 into scratch/s47_old (the old start-up).
# Calls 1-4 ran on one H100 80GB HBM3 (1,980 MHz), kept warm between them; call 5 on a second, fresh one.
#   1 (02:23, 265 s): bash cookbook/patches/ab.sh run 20b:1 20b:64 > ab.txt      main (6b861b0) against align16
#                     timeout 45 python docs/runs/s48/edge2.py > edge2_raw.txt     start-up's caps at their edges
#   2 (02:27, 328 s): timeout 540 python -m pytest -q tests/test_engine.py --durations=8 > test_engine.txt
#   3 (02:33, 137 s): per tree (this one "new", scratch/s47_old "old"), in a fresh TRITON_CACHE_DIR:
#                     python docs/runs/s47/cold2.py new|old > cold2_new.raw, cold2_old.raw (grep: cold2.txt)
#   4 (02:35, 227 s): bash cookbook/patches/ab.sh run 120b:64 > ab120.txt
#   -  (02:40)        run(kind="nvidia-h200", "bash docs/runs/s44_next_calls.sh 1"): no machine started (180 s)
#   5 (02:44, 177 s): after `ab.sh prepare` (main only) and 0d54ceb (the forty-fifth session's final code) archived
#                     into scratch/ab_s45 with a COMMIT file: bash cookbook/patches/ab.sh run 20b:1 20b:64
