#!/bin/bash
# Device entry point: run torchao and microxcaling on inputs.safetensors
# and pack the outputs into $OUT/mx.tar.gz (see README.md).
set -eu
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
rm -rf /tmp/mx-out
python3 run.py --out /tmp/mx-out
tar -C /tmp -czf "$OUT/mx.tar.gz" mx-out
ls -l "$OUT"
