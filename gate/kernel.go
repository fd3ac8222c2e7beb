package gate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Kernel is one kernel under certification and its claim: what it
// computes, in the reference's terms. The claim is data, so that every
// backend selects, reports and certifies kernels the same way.
type Kernel struct {
	// Name is the kernel's entry point.
	Name string
	// Module is the source family the kernel is compiled from.
	Module string
	// Conversion is the refimpl/unary conversion ("format/profile") a
	// unary kernel claims; empty for other ops.
	Conversion string
	// Op is the refimpl/ops operation the kernel claims to implement, and
	// Params the parameter values that select it: each must be present
	// with that value, or absent with that value as the op's default
	// (refimpl/ops Op.Defaults).
	Op     string
	Params ops.Params
	// Optional lists the other parameters the kernel handles, with the
	// values it accepts (nil: any value it can parse). A parameter that is
	// neither in Params nor in Optional is refused.
	Optional map[string][]string
	// Accepts, when set, further restricts the parameters (a GEMV runs
	// only the schedules it declares).
	Accepts func(p ops.Params) bool
	// Schedule is the float schedule a kernel with a reduction declares
	// (Declared checks it); nil otherwise.
	Schedule *gemv.Schedule
	// ThirdParty names the source of a kernel copied from elsewhere and
	// certified as found, rather than written to a profile by bitexact.
	ThirdParty string
	// Doc says what the kernel is.
	Doc string
}

// Matches reports whether k claims op under parameters p. A parameter p
// leaves out has the op's default (refimpl/ops Op.Defaults), as the
// reference computes it.
func (k Kernel) Matches(op string, p ops.Params) bool {
	if op != k.Op {
		return false
	}
	var defaults ops.Params
	if o, err := ops.Lookup(op); err == nil {
		defaults = o.Defaults
	}
	for key, v := range k.Params {
		got, ok := p[key]
		if !ok {
			got = defaults[key]
		}
		if got != v {
			return false
		}
	}
	for key, v := range p {
		if _, ok := k.Params[key]; ok {
			continue
		}
		allowed, ok := k.Optional[key]
		if !ok {
			return false
		}
		if allowed != nil && !slices.Contains(allowed, v) {
			return false
		}
	}
	return k.Accepts == nil || k.Accepts(p)
}

// Claim spells what k is held to: its conversion, or its op with the
// parameters that select it and those it handles ("nvfp4.quantize
// recipe=canonical swizzle=0|1 global=any").
func (k Kernel) Claim() string {
	if k.Conversion != "" {
		return k.Conversion
	}
	parts := []string{k.Op}
	for _, key := range sortedKeys(k.Params) {
		parts = append(parts, key+"="+k.Params[key])
	}
	opt := make([]string, 0, len(k.Optional))
	for key := range k.Optional {
		opt = append(opt, key)
	}
	sort.Strings(opt)
	for _, key := range opt {
		vals := "any"
		if k.Schedule != nil && key == "schedule" {
			vals = k.Schedule.String()
		} else if k.Optional[key] != nil {
			vals = strings.Join(k.Optional[key], "|")
		}
		parts = append(parts, key+"="+vals)
	}
	return strings.Join(parts, " ")
}

// ParamString spells p with its keys sorted: "{format=e4m3, profile=satfinite}".
func ParamString(p ops.Params) string {
	s := make([]string, 0, len(p))
	for _, k := range sortedKeys(p) {
		s = append(s, k+"="+p[k])
	}
	return "{" + strings.Join(s, ", ") + "}"
}

func sortedKeys(p ops.Params) []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lookup finds the kernel named name among ks.
func lookup(ks []Kernel, name string) (Kernel, error) {
	for _, k := range ks {
		if k.Name == name {
			return k, nil
		}
	}
	return Kernel{}, fmt.Errorf("unknown kernel %q", name)
}

// Table is a backend's kernels, each with the code that launches it on
// the backend's device D: the claims and the code that honours them stand
// side by side, and Run finds the code by name.
type Table[D any] []Entry[D]

// Entry is one kernel of a Table.
type Entry[D any] struct {
	Kernel
	Launch func(ctx context.Context, d D, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error)
}

// Kernels lists the claims.
func (t Table[D]) Kernels() []Kernel {
	ks := make([]Kernel, len(t))
	for i, e := range t {
		ks[i] = e.Kernel
	}
	return ks
}

// Run launches kernel k on d (a Backend's Launch).
func (t Table[D]) Run(ctx context.Context, d D, k Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	for _, e := range t {
		if e.Name == k.Name {
			return e.Launch(ctx, d, k, p, in)
		}
	}
	return nil, fmt.Errorf("unknown kernel %q", k.Name)
}
