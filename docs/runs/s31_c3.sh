#!/bin/bash
# s31 call 3: the whole suite on the H200 at 40ab508 (code of 845bd00), without tests/test_cookbook.py (its
# interpreter checks need numpy < 2.4; the device has 2.5.2) and tests/test_compile.py (CPU-only; CI runs both)
timeout 560 python -m pytest -q -p no:cacheprovider --durations=10 --ignore=tests/test_cookbook.py --ignore=tests/test_compile.py 2>&1 | tail -25
