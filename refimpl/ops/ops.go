// Package ops is the registry of every reference operation under one
// uniform signature: named tensors and string parameters in, named tensors
// out. Golden generation, the wasm guest, the native cross-check and
// certification all call operations through this table, so that each of
// them runs exactly the same reference code.
//
// Each op family registers itself from its own file (fp4.go, fp8.go, ...).
package ops

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Params are an op's scalar arguments (profile names, group sizes,
// schedule names), as strings so that they serialise trivially into golden
// manifests and across the wasm boundary.
type Params map[string]string

// Tensors are named tensors.
type Tensors map[string]tensor.Tensor

// Op is one reference operation.
type Op struct {
	Name string
	// Doc is one line: what the op computes and under which contract.
	Doc string
	// Params lists the accepted parameter keys with their meaning.
	Params map[string]string
	// Inputs and Outputs name the tensors, in a stable order.
	Inputs, Outputs []string
	Run             func(p Params, in Tensors) (Tensors, error)
}

var registry = map[string]Op{}

func register(op Op) {
	if _, dup := registry[op.Name]; dup {
		panic("ops: duplicate op " + op.Name)
	}
	registry[op.Name] = op
}

// Lookup finds an op by name.
func Lookup(name string) (Op, error) {
	op, ok := registry[name]
	if !ok {
		return Op{}, fmt.Errorf("unknown op %q (known: %v)", name, Names())
	}
	return op, nil
}

// Names lists the registered ops, sorted.
func Names() []string {
	n := make([]string, 0, len(registry))
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Run looks up an op, checks that its parameters are known and its inputs
// present, and runs it. Errors name the op.
func Run(name string, p Params, in Tensors) (Tensors, error) {
	op, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	for k := range p {
		if _, ok := op.Params[k]; !ok {
			return nil, fmt.Errorf("op %s: unknown parameter %q", name, k)
		}
	}
	for _, k := range op.Inputs {
		t, ok := in[k]
		if !ok {
			return nil, fmt.Errorf("op %s: missing input tensor %q", name, k)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("op %s: input %q: %w", name, k, err)
		}
	}
	out, err := op.Run(p, in)
	if err != nil {
		return nil, fmt.Errorf("op %s: %w", name, err)
	}
	return out, nil
}

// Get returns a parameter or its default.
func (p Params) Get(key, def string) string {
	if v, ok := p[key]; ok {
		return v
	}
	return def
}

// Int returns an integer parameter or its default.
func (p Params) Int(key string, def int) (int, error) {
	v, ok := p[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("parameter %s=%q is not an integer", key, v)
	}
	return n, nil
}
