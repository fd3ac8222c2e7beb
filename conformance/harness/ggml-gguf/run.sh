#!/usr/bin/env bash
# Records what ggml's own C reference block functions do on the GGUF
# corpus: quantize_row_*_ref, dequantize_row_* and the four generic dot
# products, built unmodified from a ggml checkout (see README.md).
#
#   GGML_DIR=/path/to/ggml bash conformance/harness/ggml-gguf/run.sh [build...]
#
# Builds (default: all four):
#   nofma  x86-64, gcc -O3 -ffp-contract=off             -> profile nofma
#   fma    x86-64, gcc -O3 -march=haswell -ffp-contract=fast -> profile fma
#   arm64  aarch64-linux-gnu-gcc -O3 (contraction on by default), run under
#          qemu-aarch64 (Debian: gcc-aarch64-linux-gnu qemu-user) -> arm64
#   arm64-nofma  the same with -ffp-contract=off             -> arm64-nofma
# Every build has -DNDEBUG, as llama.cpp's release builds do: with asserts
# on, nearest_int's range assert stops ggml on the non-finite blocks.
#
# Run from the repository root. KEEP=DIR keeps the raw outputs under DIR.
set -euo pipefail
: "${GGML_DIR:?set GGML_DIR to a ggml checkout (github.com/ggml-org/ggml)}"
builds=${*:-nofma fma arm64 arm64-nofma}
here=conformance/harness/ggml-gguf
rec=$here/corpus-records
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$rec"

commit=$(git -C "$GGML_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
impl="ggml-org/ggml@$commit"
go build -o "$work/tool" ./$here/tool
mkdir -p "$work/in"
"$work/tool" corpus "$work/in"

for b in $builds; do
	run=()
	case $b in
	nofma) cc=gcc arch="-ffp-contract=off" arch_name=x86-64 ;;
	fma) cc=gcc arch="-march=haswell -ffp-contract=fast" arch_name=x86-64 ;;
	arm64) cc=aarch64-linux-gnu-gcc arch="" arch_name=arm64 run=(qemu-aarch64 -L /usr/aarch64-linux-gnu) ;;
	arm64-nofma) cc=aarch64-linux-gnu-gcc arch="-ffp-contract=off" arch_name=arm64 run=(qemu-aarch64 -L /usr/aarch64-linux-gnu) ;;
	*) echo "run.sh: unknown build $b (nofma, fma, arm64, arm64-nofma)" >&2; exit 2 ;;
	esac
	flags="-O3 $arch -DNDEBUG -std=gnu11 -ffunction-sections -fdata-sections"
	flags=$(echo $flags)
	inc=(-I"$GGML_DIR/include" -I"$GGML_DIR/src" -I"$GGML_DIR/src/ggml-cpu")
	o=$work/$b
	mkdir -p "$o/out"
	$cc $flags "${inc[@]}" -c $here/gguf.c -o "$o/gguf.o"
	$cc $flags "${inc[@]}" -c "$GGML_DIR/src/ggml-quants.c" -o "$o/quants.o"
	$cc $flags "${inc[@]}" -c "$GGML_DIR/src/ggml-cpu/quants.c" -o "$o/cpuquants.o"
	$cc $flags -DGGML_VERSION='"harness"' -DGGML_COMMIT='"harness"' "${inc[@]}" -c "$GGML_DIR/src/ggml.c" -o "$o/ggml.o"
	$cc -Wl,--gc-sections "$o/gguf.o" "$o/quants.o" "$o/cpuquants.o" "$o/ggml.o" -o "$o/gguf" -lm -lpthread
	g=("${run[@]}" "$o/gguf")
	for t in q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K q6_K q8_K tq1_0 tq2_0 nvfp4 q1_0 q2_0; do
		"${g[@]}" quantize $t "$work/in/floats.f32" "$o/out/q.$t"
	done
	for t in q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K q6_K q8_K iq4_nl iq4_xs tq1_0 tq2_0 nvfp4 q1_0 q2_0; do
		"${g[@]}" dequantize $t "$work/in/blocks.$t" "$o/out/dq.$t"
	done
	for d in q4_0_q8_0 q8_0_q8_0 q4_K_q8_K q6_K_q8_K; do
		"${g[@]}" vecdot $d 512 "$work/in/weights.$d" "$work/in/acts.f32" "$o/out/dot.$d"
	done
	build="$($cc --version | head -1) $flags, linked with -Wl,--gc-sections ($arch_name)"
	[ $arch_name = arm64 ] && build="$build, run under $(qemu-aarch64 --version | head -1)"
	"$work/tool" record -profile $b -implementation "$impl" -build "$build" \
		-command "GGML_DIR=<ggml checkout at $commit> bash $here/run.sh $b" "$o/out" "$rec/$b.json"
	if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP/$b" && cp "$o/out/"* "$KEEP/$b/"; fi
	echo "run.sh: $b recorded in $rec/$b.json"
done
