#!/bin/bash
# s29 call 4: the cost of one kernel boundary in a CUDA graph (cookbook/bench_boundary.py)
timeout 200 python cookbook/bench_boundary.py --out $OUT/s29_c4_boundary.jsonl
timeout 200 python cookbook/bench_boundary.py --launches 50 --programs 1 132
