#!/usr/bin/env bash
# Records ml_dtypes' C++ conversions over all 2^32 float32 inputs, built
# from a jax-ml/ml_dtypes checkout and the Eigen commit it pins
# (third_party/eigen). See README.md.
#
#   ML_DTYPES_DIR=/path/to/ml_dtypes EIGEN_DIR=/path/to/eigen \
#       bash conformance/harness/mldtypes/run.sh [ops...]
#
# Run from the repository root; ops default to e2m1 e4m3 e5m2 e8m0 bf16 fp16.
set -euo pipefail
: "${ML_DTYPES_DIR:?set ML_DTYPES_DIR to a jax-ml/ml_dtypes checkout}"
: "${EIGEN_DIR:?set EIGEN_DIR to the Eigen commit ml_dtypes pins (git -C \$ML_DTYPES_DIR ls-tree HEAD third_party/eigen)}"
ops=${*:-e2m1 e4m3 e5m2 e8m0 bf16 fp16}
here=conformance/harness/mldtypes
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

commit=$(git -C "$ML_DTYPES_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
eigen=$(git -C "$EIGEN_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ML_DTYPES_DIR/ml_dtypes/__init__.py")
flags="-O3 -std=c++20"
build="$(g++ --version | head -1) $flags, x86-64"
cmd="ML_DTYPES_DIR=<ml_dtypes at $commit> EIGEN_DIR=<Eigen at $eigen> bash $here/run.sh"

go build -o "$work/bitexact" ./cmd/bitexact
g++ $flags -I"$ML_DTYPES_DIR" -I"$EIGEN_DIR" $here/sweep.cc -o "$work/sweep" -lpthread
for op in $ops; do
	case $op in
	e2m1) fn="ml_dtypes::float4_e2m1fn(float) (ml_dtypes/include/mxfloat.h)" ;;
	e4m3) fn="ml_dtypes::float8_e4m3fn(float) (ml_dtypes/include/float8.h)" ;;
	e5m2) fn="ml_dtypes::float8_e5m2(float) (ml_dtypes/include/float8.h)" ;;
	e8m0) fn="ml_dtypes::float8_e8m0fnu(float) (ml_dtypes/include/float8.h)" ;;
	bf16) fn="Eigen::bfloat16(float) (Eigen/src/Core/arch/Default/BFloat16.h)" ;;
	fp16) fn="Eigen::half(float) (Eigen/src/Core/arch/Default/Half.h)" ;;
	*) echo "run.sh: unknown op $op" >&2; exit 2 ;;
	esac
	"$work/sweep" "$op" 2 | "$work/bitexact" record --format "$op" --harness mldtypes \
		--implementation "jax-ml/ml_dtypes@$commit ($version) with Eigen@$eigen" --function "$fn" \
		--build "$build" --command "$cmd" --out "$here/records/$op.cc.json"
done
