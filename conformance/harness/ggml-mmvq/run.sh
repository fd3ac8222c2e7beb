#!/bin/sh
# Builds bench.cu against a ggml checkout and runs it on the GPU: the
# outputs check, CUDA-event timings, then the same kernels under Nsight
# Compute with cold caches. Usage, from the repository root:
#   GGML_DIR=/path/to/ggml sh conformance/harness/ggml-mmvq/run.sh [OUTDIR]
# NVCC and NCU name the tools (default: nvcc and ncu on PATH); PTX our
# module (default: backends/cuda/ptx/gemv_mxfp4.ptx of this repository).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
G=${GGML_DIR:?set GGML_DIR to a ggml checkout (github.com/ggml-org/ggml)}
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
PTX=${PTX:-$root/backends/cuda/ptx/gemv_mxfp4.ptx}
B=$(mktemp -d)
O=${1:-$B/out}
mkdir -p "$O"
# ggml's two kernels, cut from its sources unmodified (see bench.cu).
sed -n '1,/^\/\/ Dedicated MoE multi-token kernel/p' "$G/src/ggml-cuda/mmvq.cu" >"$B/ggml_mmvq_kernel.cuh"
sed -n '1,/^__device__ __forceinline__ uint8_t compute_e8m0_scale/p' "$G/src/ggml-cuda/quantize.cu" | sed '$d' >"$B/ggml_quantize_kernel.cuh"
grep -q 'static __global__ void mul_mat_vec_q(' "$B/ggml_mmvq_kernel.cuh" || { echo "run.sh: mul_mat_vec_q not found in $G/src/ggml-cuda/mmvq.cu" >&2; exit 1; }
grep -q 'static __global__ void quantize_q8_1(' "$B/ggml_quantize_kernel.cuh" || { echo "run.sh: quantize_q8_1 not found in $G/src/ggml-cuda/quantize.cu" >&2; exit 1; }
# ggml-cuda's own flags (src/ggml-cuda/CMakeLists.txt: -use_fast_math
# -extended-lambda), for the H100 only (a native build's architecture).
set -x
"$NVCC" --version | tail -2
"$NVCC" -std=c++17 -O3 -arch=sm_90 -use_fast_math -extended-lambda -I"$B" -I"$G/include" -I"$G/src" -I"$G/src/ggml-cuda" \
  -o "$B/bench" "$here/bench.cu" -lcuda
"$B/bench" "$PTX" "$O"
"$NCU" --cache-control all --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum \
  --csv --page raw --print-units base --log-file "$O/ncu.csv" "$B/bench" "$PTX" "$O" ncu
python3 "$here/ncu_summary.py" "$O/ncu.csv"
