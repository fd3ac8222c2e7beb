module github.com/bitexact/bitexact

go 1.26

toolchain go1.26.8

require (
	github.com/nlpodyssey/safetensors v0.0.0-20250209183917-bfb01cc25f7c
	github.com/tetratelabs/wazero v1.12.0
	github.com/x448/float16 v0.8.4
	gorgonia.org/cu v0.9.6
)

require (
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/sys v0.44.0 // indirect
)
