# trees: scratch/ab_main (faabe7b), ab_undo1b64 (bash cookbook/patches/ab.sh prepare undo1b64), ab_old (git archive 40ab508)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; date -u; OUT=$OUT bash cookbook/patches/ab.sh run 20b:64; date -u
