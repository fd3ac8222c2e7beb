package bitexacttest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Suite holds f, a kernel of the named vendor suite (see
// `bitexact export --list`: "nvfp4", "mxfp4", "awq-pack", "gemv-awq",
// "e4m3", ...), to one of the suite's profiles. f is called once per task
// of the suite, on the test goroutine, with the task's golden inputs, and
// returns its outputs (built with Inputs.Outputs). Every task is held to
// profile: against the golden set's expected outputs, or where the set has
// no case of the profile for the task, against outputs the embedded wasm
// reference computes (as bitexact certify does).
//
// profile is the profile's name as the suite lists it ("satfinite",
// "recipe=canonical,swizzle=0") or its keys in any order with the op's
// defaults left out ("recipe=canonical"); for the GEMV suites it may also
// be any schedule spec string ("chunk=0,lanes=0,group=32,fma=0,acc=fp32,
// partial=fp32,reduce=seq,out=fp32"), checked against computed outputs. An unknown suite or profile, an
// input read under a name or dtype it does not have, and outputs of the
// wrong name, dtype or shape stop the test with an error saying so;
// differing outputs fail it with a report (see Report). Of the options,
// only MaxReported applies.
func Suite(t testing.TB, name, profile string, f func(in Inputs) (Outputs, error), opts ...Option) {
	t.Helper()
	report(t)(CheckSuite(name, profile, f, opts...))
}

// CheckSuite is Suite without a testing.TB.
func CheckSuite(name, profile string, f func(in Inputs) (Outputs, error), opts ...Option) (*Report, error) {
	start := time.Now()
	cfg := newConfig(opts)
	g, err := loadGolden(name)
	if err != nil {
		return nil, err
	}
	p, err := profileName(g.s, profile)
	if err != nil {
		return nil, err
	}
	cert, err := g.certify(p, cfg.maxFirst, func(t gate.Task) (ops.Tensors, error) {
		c := &call{suite: g.s.Name, task: t.Name, params: t.Params, in: t.Inputs, layout: t.Layout}
		out, ferr := f(Inputs{c})
		if ferr != nil {
			return nil, errors.Join(c.err(), fmt.Errorf("bitexacttest: suite %s, task %s: the kernel: %w", g.s.Name, t.Name, ferr))
		}
		return c.finish(out)
	})
	if err != nil {
		return nil, err
	}
	r := &Report{Subject: g.s.Name + " " + p, Conforms: cert.Conforms, Golden: cert, Diagnosis: cert.Diagnosis}
	for _, cs := range cert.Cases {
		r.Inputs += uint64(cs.Elements)
		r.Mismatches += uint64(cs.Mismatches)
		for _, m := range cs.First {
			if len(r.First) == cfg.maxFirst {
				break
			}
			where := fmt.Sprintf("task %s: %s%v", cs.Task, m.Tensor, m.Position)
			if len(m.Inputs) > 0 {
				var xs []string
				for _, v := range m.Inputs {
					xs = append(xs, v.String())
				}
				where += " from x = " + strings.Join(xs, ", ")
			}
			r.First = append(r.First, Difference{Where: where, Want: m.Expected, Got: m.Got})
		}
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

// profileName finds the suite's profile that p names, in its canonical
// spelling (suite.Suite.CanonicalProfile, the one claim parser): a
// profile name as listed, or its keys in any order with defaults left
// out, or for a GEMV suite a schedule spec string.
func profileName(s *suite.Suite, p string) (string, error) {
	q, err := s.CanonicalProfile(p)
	if err != nil {
		return "", fmt.Errorf("bitexacttest: suite %s has no profile %q (its profiles: %s): %w", s.Name, p, strings.Join(s.Profiles, ", "), err)
	}
	return q, nil
}

func sortedNames(ts ops.Tensors) []string {
	var n []string
	for k := range ts {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// call is one run of a suite kernel on one task: what it may read, what it
// must write, and the misuses seen.
type call struct {
	suite, task string
	params      ops.Params
	in          ops.Tensors
	layout      []golden.TensorInfo
	outs        map[string]*output
	errs        []error
}

type output struct {
	info golden.TensorInfo
	data any // []byte, []uint16, []int16, []int32, []uint32, []float32, or a tensor.Tensor from Set
}

func (c *call) fail(format string, a ...any) {
	c.errs = append(c.errs, fmt.Errorf("bitexacttest: suite %s, task %s: "+format, append([]any{c.suite, c.task}, a...)...))
}

func (c *call) err() error { return errors.Join(c.errs...) }

func describe(name string, t tensor.Tensor) string {
	s := fmt.Sprintf("%s %s%v", name, t.DType, t.Shape)
	if t.Logical != "" {
		s += " " + t.Logical
	}
	return s
}

func describeInfo(i golden.TensorInfo) string {
	return describe(i.Name, tensor.Tensor{DType: tensor.DType(i.DType), Shape: i.Shape, Logical: i.Logical})
}

// Inputs are a task's golden inputs, read through typed accessors. An
// accessor given a name the task does not have, or a dtype the tensor does
// not have, returns nil and the check stops with an error naming the
// task's inputs. The slices returned are copies the kernel may keep.
type Inputs struct{ c *call }

// Task is the task's name ("edges.e4m3", "blocks.edge", ...).
func (in Inputs) Task() string { return in.c.task }

// Params are the op parameters of the task under the profile held to
// (the task's fixed parameters, such as format=e4m3 or group=128, and the
// profile's keys).
func (in Inputs) Params() map[string]string {
	m := map[string]string{}
	for k, v := range in.c.params {
		m[k] = v
	}
	return m
}

// Names lists the input tensors, sorted.
func (in Inputs) Names() []string { return sortedNames(in.c.in) }

// Tensor returns the named input as stored (dtype, shape, logical format,
// little-endian bytes).
func (in Inputs) Tensor(name string) tensor.Tensor {
	t, ok := in.get(name, "")
	if !ok {
		return tensor.Tensor{}
	}
	t.Data = append([]byte(nil), t.Data...)
	t.Shape = append([]int(nil), t.Shape...)
	return t
}

// Shape is the named input's shape.
func (in Inputs) Shape(name string) []int {
	t, _ := in.get(name, "")
	return append([]int(nil), t.Shape...)
}

func (in Inputs) get(name string, d tensor.DType) (tensor.Tensor, bool) {
	t, ok := in.c.in[name]
	var have []string
	for _, n := range sortedNames(in.c.in) {
		have = append(have, describe(n, in.c.in[n]))
	}
	switch {
	case !ok:
		in.c.fail("no input %q (its inputs: %s)", name, strings.Join(have, "; "))
	case d != "" && t.DType != d:
		in.c.fail("input %s read as %s", describe(name, t), d)
		ok = false
	}
	return t, ok
}

// F32 returns the values of an F32 input.
func (in Inputs) F32(name string) []float32 {
	t, ok := in.get(name, tensor.F32)
	if !ok {
		return nil
	}
	return t.F32()
}

// F16 returns the bit patterns of an F16 (IEEE binary16) input.
func (in Inputs) F16(name string) []uint16 { return in.bits16(name, tensor.F16) }

// BF16 returns the bit patterns of a BF16 input.
func (in Inputs) BF16(name string) []uint16 { return in.bits16(name, tensor.BF16) }

func (in Inputs) bits16(name string, d tensor.DType) []uint16 {
	t, ok := in.get(name, d)
	if !ok {
		return nil
	}
	return t.Bits16()
}

// U8 returns the bytes of a U8 input (E2M1, FP8 or E8M0 codes, packed
// E2M1 pairs: see Tensor for the logical format).
func (in Inputs) U8(name string) []byte {
	t, ok := in.get(name, tensor.U8)
	if !ok {
		return nil
	}
	return append([]byte(nil), t.Data...)
}

// I32 returns the values of an I32 input.
func (in Inputs) I32(name string) []int32 {
	t, ok := in.get(name, tensor.I32)
	if !ok {
		return nil
	}
	return t.I32()
}

// I16 returns the values of an I16 input.
func (in Inputs) I16(name string) []int16 {
	t, ok := in.get(name, tensor.I16)
	if !ok {
		return nil
	}
	b := t.Bits16()
	v := make([]int16, len(b))
	for i, x := range b {
		v[i] = int16(x)
	}
	return v
}

// Outputs returns the task's outputs, to be filled through the typed
// accessors of Outputs and returned from the kernel.
func (in Inputs) Outputs() Outputs { return Outputs(in) }

// Outputs are the outputs the task expects, each allocated with the
// profile's dtype and shape. An accessor returns the storage of the named
// output for the kernel to fill; a name the task does not expect, or a
// dtype the output does not have, returns nil and the check stops with an
// error naming the expected outputs. Every output must be written (through
// its accessor or Set).
type Outputs struct{ c *call }

// Names lists the expected outputs, sorted.
func (o Outputs) Names() []string {
	var n []string
	for _, i := range o.c.layout {
		n = append(n, i.Name)
	}
	sort.Strings(n)
	return n
}

// Shape is the named output's shape.
func (o Outputs) Shape(name string) []int {
	info, _ := o.info(name)
	return append([]int(nil), info.Shape...)
}

func (o Outputs) info(name string) (golden.TensorInfo, bool) {
	var want []string
	for _, i := range o.c.layout {
		if i.Name == name {
			return i, true
		}
		want = append(want, describeInfo(i))
	}
	o.c.fail("no output %q (the task's outputs: %s)", name, strings.Join(want, "; "))
	return golden.TensorInfo{}, false
}

func outputSlot[T any](o Outputs, name string, d tensor.DType, mk func(n int) T) T {
	var zero T
	info, ok := o.info(name)
	if !ok {
		return zero
	}
	if tensor.DType(info.DType) != d {
		o.c.fail("output %s written as %s", describeInfo(info), d)
		return zero
	}
	if o.c.outs == nil {
		o.c.outs = map[string]*output{}
	}
	if s, ok := o.c.outs[name]; ok {
		if v, ok := s.data.(T); ok {
			return v
		}
	}
	n := tensor.Tensor{Shape: info.Shape}.Len()
	v := mk(n)
	o.c.outs[name] = &output{info: info, data: v}
	return v
}

// U8 is the storage of a U8 output (codes, packed pairs, scales).
func (o Outputs) U8(name string) []byte {
	return outputSlot(o, name, tensor.U8, func(n int) []byte { return make([]byte, n) })
}

// F32 is the storage of an F32 output.
func (o Outputs) F32(name string) []float32 {
	return outputSlot(o, name, tensor.F32, func(n int) []float32 { return make([]float32, n) })
}

// F16 is the storage of an F16 output, as bit patterns.
func (o Outputs) F16(name string) []uint16 {
	return outputSlot(o, name, tensor.F16, func(n int) []uint16 { return make([]uint16, n) })
}

// BF16 is the storage of a BF16 output, as bit patterns.
func (o Outputs) BF16(name string) []uint16 {
	return outputSlot(o, name, tensor.BF16, func(n int) []uint16 { return make([]uint16, n) })
}

// I32 is the storage of an I32 output (AWQ words).
func (o Outputs) I32(name string) []int32 {
	return outputSlot(o, name, tensor.I32, func(n int) []int32 { return make([]int32, n) })
}

// I16 is the storage of an I16 output.
func (o Outputs) I16(name string) []int16 {
	return outputSlot(o, name, tensor.I16, func(n int) []int16 { return make([]int16, n) })
}

// Set gives the named output as a whole tensor, for a kernel that already
// holds its result as stored bytes. Its dtype and shape must be the
// expected ones; an empty Logical takes the expected logical format.
func (o Outputs) Set(name string, t tensor.Tensor) {
	info, ok := o.info(name)
	if !ok {
		return
	}
	if o.c.outs == nil {
		o.c.outs = map[string]*output{}
	}
	o.c.outs[name] = &output{info: info, data: t}
}

// finish turns what the kernel wrote into tensors and checks them against
// the layout.
func (c *call) finish(o Outputs) (ops.Tensors, error) {
	if o.c == nil {
		c.fail("the kernel returned no Outputs (build them with in.Outputs())")
		return nil, c.err()
	}
	if o.c != c {
		c.fail("the kernel returned the Outputs of task %s", o.c.task)
		return nil, c.err()
	}
	out := ops.Tensors{}
	for _, info := range c.layout {
		s, ok := c.outs[info.Name]
		if !ok {
			c.fail("output %s not written", describeInfo(info))
			continue
		}
		want := tensor.Tensor{DType: tensor.DType(info.DType), Shape: info.Shape, Logical: info.Logical}
		t := want
		switch v := s.data.(type) {
		case tensor.Tensor:
			if v.Logical == "" {
				v.Logical = info.Logical
			}
			if err := v.Validate(); err != nil {
				c.fail("output %s: %v", info.Name, err)
				continue
			}
			if v.DType != want.DType || v.Logical != want.Logical || fmt.Sprint(v.Shape) != fmt.Sprint(want.Shape) {
				c.fail("output %s, want %s", describe(info.Name, v), describeInfo(info))
				continue
			}
			t = v
		case []byte:
			t.Data = v
		case []uint16:
			for _, x := range v {
				t.Data = binary.LittleEndian.AppendUint16(t.Data, x)
			}
		case []int16:
			for _, x := range v {
				t.Data = binary.LittleEndian.AppendUint16(t.Data, uint16(x))
			}
		case []int32:
			for _, x := range v {
				t.Data = binary.LittleEndian.AppendUint32(t.Data, uint32(x))
			}
		case []float32:
			for _, x := range v {
				t.Data = binary.LittleEndian.AppendUint32(t.Data, math.Float32bits(x))
			}
		}
		out[info.Name] = t
	}
	return out, c.err()
}
