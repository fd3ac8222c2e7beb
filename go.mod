module github.com/bitexact/bitexact

go 1.26

require (
	github.com/google/uuid v1.1.1 // indirect
	github.com/nlpodyssey/safetensors v0.0.0-20250209183917-bfb01cc25f7c // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sys v0.44.0 // indirect
	gorgonia.org/cu v0.9.6 // indirect
)
