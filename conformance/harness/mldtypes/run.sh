#!/usr/bin/env bash
# Records ml_dtypes' C++ conversions over all 2^32 float32 inputs, built
# from a jax-ml/ml_dtypes checkout and the Eigen commit it pins
# (third_party/eigen). See README.md.
#
#   ML_DTYPES_DIR=/path/to/ml_dtypes EIGEN_DIR=/path/to/eigen \
#       bash conformance/harness/mldtypes/run.sh [ops...]
#
# Run from the repository root; ops default to every conversion sweep.cc
# knows (sweep --list).
set -euo pipefail
: "${ML_DTYPES_DIR:?set ML_DTYPES_DIR to a jax-ml/ml_dtypes checkout}"
: "${EIGEN_DIR:?set EIGEN_DIR to the Eigen commit ml_dtypes pins (git -C \$ML_DTYPES_DIR ls-tree HEAD third_party/eigen)}"
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
ops=${*:-$("$work/sweep" --list)}
for op in $ops; do
	fn=$("$work/sweep" --function "$op")
	"$work/sweep" "$op" 2 | "$work/bitexact" record --format "$op" --harness mldtypes \
		--implementation "jax-ml/ml_dtypes@$commit ($version) with Eigen@$eigen" --function "$fn" \
		--build "$build" --command "$cmd" --out "$here/records/$op.cc.json"
done
