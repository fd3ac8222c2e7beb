#!/usr/bin/env bash
# Records what gguf-py's numpy quantizers (llama.cpp gguf-py/gguf/quants.py)
# do on the GGUF corpus of conformance/harness/ggml-gguf (see README.md).
#
#   QUANTS_PY=/path/to/llama.cpp/gguf-py/gguf/quants.py LLAMA_CPP_COMMIT=<commit> \
#       bash conformance/harness/gguf-py/run.sh
#
# Run from the repository root. Needs python3 with numpy (Debian:
# python3-numpy); PYTHON picks the interpreter (default /usr/bin/python3,
# the one Debian's numpy is installed for).
set -euo pipefail
: "${QUANTS_PY:?set QUANTS_PY to gguf-py/gguf/quants.py of a llama.cpp checkout}"
commit=${LLAMA_CPP_COMMIT:-$(git -C "$(dirname "$QUANTS_PY")" rev-parse HEAD 2>/dev/null || echo unknown)}
py=${PYTHON:-/usr/bin/python3}
here=conformance/harness/gguf-py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tool" ./conformance/harness/ggml-gguf/tool
mkdir -p "$work/in" "$work/out" "$here/corpus-records"
"$work/tool" corpus "$work/in"
"$py" $here/run.py --quants "$QUANTS_PY" --corpus "$work/in" --out "$work/out"
ver=$("$py" -c 'import sys, numpy, platform; print("python %s, numpy %s, %s" % (sys.version.split()[0], numpy.__version__, platform.machine()))')
"$work/tool" record -partial -profile fma -implementation "ggml-org/llama.cpp@$commit gguf-py/gguf/quants.py" \
	-build "$ver" -command "QUANTS_PY=<llama.cpp@$commit gguf-py/gguf/quants.py> bash $here/run.sh" \
	"$work/out" "$here/corpus-records/gguf-py.json"
echo "run.sh: recorded in $here/corpus-records/gguf-py.json"
