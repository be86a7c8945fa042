# s57 call 1 (run kind nvidia-h200; got an H100 80GB HBM3, 1,980 MHz), 2026-12-06 23:45 UTC
bash docs/runs/s57/calls.sh 1
