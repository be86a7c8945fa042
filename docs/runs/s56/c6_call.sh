# trees: scratch/ab_main (faabe7b), ab_undo1b64 (bash cookbook/patches/ab.sh prepare undo1b64); ab_old moved aside
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; date -u; OUT=$OUT bash cookbook/patches/ab.sh run --both 20b:96; date -u
