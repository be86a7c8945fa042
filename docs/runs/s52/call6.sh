# s52 call 6: tiles256 (cap 256 to 4,096 pairs) first, then main (renamed zmain): 20b b256
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
OUT=$OUT/r4 bash cookbook/patches/ab.sh run 20b:256 2>&1 | grep -v Warning
