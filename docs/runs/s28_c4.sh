#!/bin/bash
# s28 call 4: the step ablated in the graph at b1 on b434305 (the committed code)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader
for m in 20b 120b; do
  timeout 150 python cookbook/ablate_step.py --model $m --batch 1 --out $OUT/s28_c4_ablate_${m}_b1.json > $OUT/c4_$m.log 2>&1; echo "$m rc $?"; tail -14 $OUT/c4_$m.log | cut -c1-110
done
