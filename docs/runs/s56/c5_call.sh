# trees: scratch/ab_main (faabe7b), ab_old (git archive 40ab508); ab_undo1b64 moved aside
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; date -u; OUT=$OUT bash cookbook/patches/ab.sh run 120b:256; date -u
