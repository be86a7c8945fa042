#!/bin/bash
# s30 call 4: per-kernel profile of a 20b decode step at batch 1 and 64 on 26abfa5
TOK=$PWD/shared/data/o200k_base.tiktoken
timeout 400 python cookbook/profile_step.py --model 20b --batch 1 64 --tokenizer $TOK --out $OUT/profile_20b_26abfa5.json 2>&1 | grep -v "loading weights" | tail -45
