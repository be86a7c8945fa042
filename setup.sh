#!/usr/bin/env bash
# Makes .venv with pinned torch/triton (the H200's versions, so CI's interpreter and the GPU compile
# the same Triton). ./setup.sh MODEL_DIR also downloads the model named by the folder (20b unless it
# says 120b) from the Hugging Face hub.
set -euo pipefail
cd "$(dirname "$0")"
[ -x .venv/bin/python ] || python3 -m venv .venv
# numpy < 2.4: Triton 3.6's CPU interpreter converts 1-element arrays with int(), an error from numpy 2.4
.venv/bin/pip install -q --disable-pip-version-check torch==2.11.0 triton==3.6.0 numpy==2.3.5 tiktoken==0.14.0 \
    safetensors==0.8.0 huggingface_hub==2.4.0 tqdm==4.70.1 pytest==9.2.0
# the cookbook's OpenAI-compatible server and its test with the official client
.venv/bin/pip install -q --disable-pip-version-check fastapi==0.165.0 uvicorn==0.54.0 openai==3.57.0
if [ $# -ge 1 ]; then
    repo=openai/gpt-oss-20b
    case "$(basename "$1")" in *120b*) repo=openai/gpt-oss-120b ;; esac
    .venv/bin/hf download "$repo" --exclude "original/*" --exclude "metal/*" --local-dir "$1"
fi
