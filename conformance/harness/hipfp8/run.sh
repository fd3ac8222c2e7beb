#!/usr/bin/env bash
# Records HIP's software float -> FNUZ FP8 conversion (internal::cast_to_f8
# of ROCm/clr hipamd/include/hip/amd_detail/amd_hip_fp8.h) over all 2^32
# float32 inputs. See README.md.
#
#   HIP_CLR_DIR=/path/to/ROCm/clr bash conformance/harness/hipfp8/run.sh [ops...]
#
# Run from the repository root; ops default to every conversion sweep.cc
# knows (sweep --list).
set -euo pipefail
: "${HIP_CLR_DIR:?set HIP_CLR_DIR to a ROCm/clr checkout}"
here=conformance/harness/hipfp8
header=$HIP_CLR_DIR/hipamd/include/hip/amd_detail/amd_hip_fp8.h
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

commit=$(git -C "$HIP_CLR_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
flags="-O2 -std=c++17 -fno-strict-aliasing"
build="$(g++ --version | head -1) $flags, x86-64"
cmd="HIP_CLR_DIR=<ROCm/clr at $commit> bash $here/run.sh"

# The function alone: from its template line to the first closing brace
# in column 0 (the header's other parts need the HIP toolchain).
awk '/^template <typename T, bool is_fnuz>$/ && !done {p=1} p {print} p && /^}$/ {exit}' "$header" >"$work/cast_to_f8.inc"
grep -q 'cast_to_f8(T _x, int wm, int we, bool clip' "$work/cast_to_f8.inc" ||
	{ echo "run.sh: cast_to_f8 not found in $header" >&2; exit 1; }

go build -o "$work/bitexact" ./cmd/bitexact
g++ $flags -I"$work" $here/sweep.cc -o "$work/sweep" -lpthread
ops=${*:-$("$work/sweep" --list)}
for op in $ops; do
	fn=$("$work/sweep" --function "$op")
	"$work/sweep" "$op" 2 | "$work/bitexact" record --format "${op%%-*}" --harness hipfp8 \
		--implementation "ROCm/clr@$commit hipamd/include/hip/amd_detail/amd_hip_fp8.h" --function "$fn" \
		--build "$build" --command "$cmd" --out "$here/records/$op.json"
done
