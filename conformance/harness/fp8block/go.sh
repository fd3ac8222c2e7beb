#!/bin/bash
# Device entry point: run every stack on inputs.safetensors and pack the
# outputs into $OUT/fp8block.tar.gz (see README.md).
set -eu
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
rm -rf /tmp/fp8block-out
python3 run.py --out /tmp/fp8block-out
tar -C /tmp -czf "$OUT/fp8block.tar.gz" fp8block-out
ls -l "$OUT"
