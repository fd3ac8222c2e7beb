# bitexact build targets. `make test` is what CI runs (through .ci/run).
GO ?= go

.PHONY: all build test short exhaustive check
all: build

# Everything CI runs (.ci/run): gofmt, vet, staticcheck, the tests, the
# exhaustive sweeps, and the GOAMD64=v3 and arm64 runs (it installs
# chromium, make and qemu-user when they are missing).
check:
	bash .ci/run

build:
	$(GO) build ./...

test:
	$(GO) test -timeout 30m ./...

short:
	$(GO) test -short ./...

# The 2^32-input property tests of every unary conversion against their
# independent oracles (BITEXACT_EXHAUSTIVE=1: every input; `go test ./...`
# runs them on a sample, and checks every output against the committed
# Merkle digests), and bitexacttest's full sweeps of a correct and two wrong
# encoders. -v streams their progress lines.
exhaustive:
	BITEXACT_EXHAUSTIVE=1 $(GO) test -v -run Exhaustive -count=1 -timeout 60m ./refimpl/... ./backends/bitexacttest

# cuda
# Native CUDA kernels (backends/cuda) and their conformance tests. Building
# with -tags cuda needs CUDA's cuda.h and libcuda; CUDA 13's cuda.h needs the
# compat header in backends/cuda/compat first on the include path (it says
# why). `make ptx` regenerates the embedded PTX with nvcc and records the
# source hash and flags that TestPTXMatchesSources checks.
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
CUDA_DIR := backends/cuda
# Keep in step with NVCCFlags in backends/cuda/kernels.go.
CUDA_NVCC_FLAGS := -ptx -std=c++17 -fmad=false -ftz=false -prec-div=true -prec-sqrt=true
# module:arch, as in Modules in backends/cuda/kernels.go.
CUDA_MODULES := e2m1:compute_89 fp8:compute_89 nvfp4:compute_89 mxfp4:compute_89 awq:compute_89 sparse24:compute_89 gemv_mxfp4:compute_89 e2m1_hw:compute_100a util:compute_89
CUDA_CGO_CFLAGS := -I$(CURDIR)/$(CUDA_DIR)/compat -I$(CUDA_HOME)/include
CUDA_CGO_LDFLAGS := -L$(CUDA_HOME)/lib64/stubs -L$(CUDA_HOME)/lib64

.PHONY: ptx test-cuda bench-cuda
ptx:
	NVCC="$(NVCC)" NVCC_FLAGS="$(CUDA_NVCC_FLAGS)" MODULES="$(CUDA_MODULES)" sh $(CUDA_DIR)/genptx.sh

test-cuda:
	CGO_CFLAGS="$(CUDA_CGO_CFLAGS)" CGO_LDFLAGS="$(CUDA_CGO_LDFLAGS)" \
	  $(GO) test -tags cuda -count=1 -timeout 20m ./$(CUDA_DIR)/ ./conformance/...

bench-cuda:
	CGO_CFLAGS="$(CUDA_CGO_CFLAGS)" CGO_LDFLAGS="$(CUDA_CGO_LDFLAGS)" \
	  $(GO) test -tags cuda -run '^$$' -bench . -benchtime 20x ./$(CUDA_DIR)/

# wasm
# Rebuild the embedded reference module wasm/refimpl.wasm from refimpl/
# (after any change there; `go test ./wasm` fails while it is stale).
# Byte-identical for a given Go toolchain version: see docs/rationale/wasm.md.
.PHONY: wasm
wasm:
	$(GO) generate ./wasm
# end wasm

# golden
# Regenerate the embedded golden set through the wasm module, and the
# generated disagreement matrix. Run after any change under refimpl/;
# `git diff --exit-code golden/ docs/semantics.md` must then be clean on a
# second run. `make digests` recomputes the 2^32 Merkle digests (minutes).
.PHONY: golden digests test-metal
golden: wasm
	$(GO) run ./cmd/bitexact golden gen
	$(GO) run ./cmd/bitexact semantics --out docs/semantics.md

digests:
	$(GO) run ./cmd/bitexact exhaustive --all --engine native --write golden/exhaustive/digests

# The Metal harness needs a Mac (build tags darwin && metal); the Linux CPU
# check of the same kernels runs in plain `go test ./backends/metal/`.
test-metal:
	$(GO) test -tags metal -count=1 ./backends/metal/
