# bitexact build targets. `make test` is what CI runs (through .ci/run).
GO ?= go

.PHONY: all build test short exhaustive
all: build

build:
	$(GO) build ./...

test:
	$(GO) test ./...

short:
	$(GO) test -short ./...

# The 2^32-input property tests of every unary conversion (also part of
# `go test ./...`; skipped under -short).
exhaustive:
	$(GO) test -run Exhaustive -count=1 -timeout 60m ./refimpl/...
