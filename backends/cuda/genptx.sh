#!/bin/sh
# Regenerates backends/cuda/ptx/*.ptx from backends/cuda/kernels with nvcc and
# prepends the provenance header that TestPTXMatchesSources checks: module
# name, SHA-256 of every kernels/*.cuh (C-locale name order) followed by
# the module's .cu, and the nvcc
# flags. Run through `make ptx` (which passes NVCC and NVCC_FLAGS); the
# module list and flags must match Modules and NVCCFlags in kernels.go.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-nvcc}
NVCC_FLAGS=${NVCC_FLAGS:-"-ptx -std=c++17 -fmad=false -ftz=false -prec-div=true -prec-sqrt=true"}
MODULES=${MODULES:-"e2m1:compute_89 fp8:compute_89 nvfp4:compute_89 mxfp4:compute_89 awq:compute_89 sparse24:compute_89 gemv_mxfp4:compute_89 e2m1_hw:compute_100a util:compute_89"}
mkdir -p "$dir/ptx"
for ma in $MODULES; do
  m=${ma%%:*}
  a=${ma##*:}
  src="$dir/kernels/$m.cu"
  out="$dir/ptx/$m.ptx"
  echo "nvcc $m.cu -> ptx/$m.ptx ($a)"
  # shellcheck disable=SC2086
  "$NVCC" $NVCC_FLAGS -arch="$a" -I"$dir/kernels" -o "$out.tmp" "$src"
  # shellcheck disable=SC2046
  sum=$(cat $(LC_ALL=C ls "$dir"/kernels/*.cuh) "$src" | sha256sum | cut -d' ' -f1)
  {
    echo "// bitexact-module: $m"
    echo "// bitexact-source-sha256: $sum"
    echo "// bitexact-nvcc-flags: $NVCC_FLAGS -arch=$a"
    cat "$out.tmp"
  } >"$out"
  rm -f "$out.tmp"
done
