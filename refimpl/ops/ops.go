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
	// Defaults are the values of the optional parameters that a caller
	// leaves out. A key of Params missing here is required, or its
	// default is computed from the inputs (Params says which). Run sees
	// p with these filled in, however it is called.
	Defaults Params
	// Choices are, by parameter, the named values of the parameters that
	// select a rule where implementations differ (e2m1.encode's profile:
	// nvidia, sw-sm121, ...), with their summaries and sources.
	Choices map[string][]Choice
	// Inputs and Outputs name the tensors, in a stable order.
	Inputs, Outputs []string
	Run             func(p Params, in Tensors) (Tensors, error)
}

var registry = map[string]Op{}

func register(op Op) {
	if _, dup := registry[op.Name]; dup {
		panic("ops: duplicate op " + op.Name)
	}
	for k := range op.Defaults {
		if _, ok := op.Params[k]; !ok {
			panic("ops: op " + op.Name + ": default for unknown parameter " + k)
		}
	}
	run, defaults := op.Run, op.Defaults
	op.Run = func(p Params, in Tensors) (Tensors, error) { return run(p.withDefaults(defaults), in) }
	registry[op.Name] = op
}

// Default returns the value op gives parameter key when a caller leaves it
// out, and whether it has a fixed one.
func (op Op) Default(key string) (string, bool) {
	v, ok := op.Defaults[key]
	return v, ok
}

// withDefaults returns p with the keys of defaults that p lacks added
// (p itself is not changed; p is returned when it lacks none).
func (p Params) withDefaults(defaults Params) Params {
	var q Params
	for k, v := range defaults {
		if _, ok := p[k]; ok {
			continue
		}
		if q == nil {
			q = make(Params, len(p)+len(defaults))
			for k, v := range p {
				q[k] = v
			}
		}
		q[k] = v
	}
	if q == nil {
		return p
	}
	return q
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
