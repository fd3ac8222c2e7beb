#!/usr/bin/env bash
# Records what ggml's own C reference functions do, built unmodified from a
# ggml checkout: all 2^32 float32 inputs through best_index_mxfp4 (E2M1 at
# unit scale), ggml_compute_fp32_to_fp16 and ggml_compute_fp32_to_bf16;
# ggml_e8m0_to_fp32 on the 256 codes; quantize_row_q8_1_ref and
# quantize_row_mxfp4_ref on the golden inputs of the q8_1 and ggml-mxfp4
# suites (results folder + certificate). See README.md.
#
#   GGML_DIR=/path/to/ggml bash conformance/harness/ggml/run.sh [x86-64|arm64] [ops...]
#
# Run from the repository root. arm64 builds with aarch64-linux-gnu-gcc and
# runs under qemu-aarch64 (Debian: gcc-aarch64-linux-gnu qemu-user).
set -euo pipefail
: "${GGML_DIR:?set GGML_DIR to a ggml checkout (github.com/ggml-org/ggml)}"
arch=${1:-x86-64}
shift || true
ops=${*:-e2m1 fp16 bf16 e8m0-decode q8_1 mxfp4}
here=conformance/harness/ggml
rec=$here/records
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case $arch in
x86-64) cc=gcc run=() ;;
arm64) cc=aarch64-linux-gnu-gcc run=(qemu-aarch64 -L /usr/aarch64-linux-gnu) ;;
*) echo "run.sh: unknown arch $arch (x86-64 or arm64)" >&2; exit 2 ;;
esac

commit=$(git -C "$GGML_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
flags="-O3 -ffunction-sections -fdata-sections"
build="$($cc --version | head -1) $flags, linked with -Wl,--gc-sections ($arch)"
[ $arch = arm64 ] && build="$build, run under $(qemu-aarch64 --version | head -1)"
impl="ggml-org/ggml@$commit"
cmd="GGML_DIR=<ggml checkout at $commit> bash $here/run.sh $arch"

go build -o "$work/bitexact" ./cmd/bitexact
$cc $flags -std=gnu11 -I"$GGML_DIR/include" -I"$GGML_DIR/src" -c $here/sweep.c -o "$work/sweep.o"
$cc $flags -std=gnu11 -DGGML_VERSION='"harness"' -DGGML_COMMIT='"harness"' -I"$GGML_DIR/include" -I"$GGML_DIR/src" \
	-c "$GGML_DIR/src/ggml.c" -o "$work/ggml.o"
$cc -Wl,--gc-sections "$work/sweep.o" "$work/ggml.o" -o "$work/sweep" -lm -lpthread
sweep=("${run[@]}" "$work/sweep")

record() { # format function
	"$work/bitexact" record --format "$1" --harness ggml --implementation "$impl" --function "$2" \
		--build "$build" --command "$cmd" --out "$rec/$1.$arch.json"
}
for op in $ops; do
	case $op in
	e2m1) "${sweep[@]}" e2m1 2 | record e2m1 "best_index_mxfp4(x, 0.5f) (src/ggml-quants.c)" ;;
	fp16) "${sweep[@]}" fp16 2 | record fp16 "ggml_compute_fp32_to_fp16 (src/ggml-impl.h)" ;;
	bf16) "${sweep[@]}" bf16 2 | record bf16 "ggml_compute_fp32_to_bf16 (src/ggml-impl.h)" ;;
	e8m0-decode)
		"${sweep[@]}" e8m0-decode | "$work/bitexact" record --table e8m0.decode --harness ggml --implementation "$impl" \
			--function "ggml_e8m0_to_fp32 (src/ggml-impl.h)" --build "$build" --command "$cmd" --out "$rec/e8m0-decode.$arch.json" ;;
	q8_1 | mxfp4)
		suite=q8_1 fn=quantize_row_q8_1_ref
		[ $op = mxfp4 ] && suite=ggml-mxfp4 fn=quantize_row_mxfp4_ref
		"$work/bitexact" export --suite $suite --out "$work/export-$op" >/dev/null
		rm -rf "${rec:?}/$op.$arch"
		python3 $here/blocks.py --export "$work/export-$op" --out "$rec/$op.$arch" --op $op \
			--implementation "$impl $fn (src/ggml-quants.c)" --platform "$build" -- "${sweep[@]}"
		"$work/bitexact" certify --suite $suite --results "$rec/$op.$arch" --cert-out "$work/cert-$op" || true
		cp "$work/cert-$op/certificate.json" "$rec/$op.$arch/certificate.json" ;;
	*) echo "run.sh: unknown op $op" >&2; exit 2 ;;
	esac
done
