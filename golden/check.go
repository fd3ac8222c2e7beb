package golden

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TensorDiff describes how one output tensor differs from its expected
// value. Elements are counted in storage units of the dtype (one byte of
// a U8 tensor holds two E2M1 codes when Logical is "e2m1x2").
type TensorDiff struct {
	Tensor string
	// Problem is a one-line explanation: a missing or extra tensor, a
	// dtype or shape difference, or the first differing element.
	Problem string
	// First is the index of the first differing element, -1 when the
	// difference is not in the values.
	First int
	// Count is the number of differing elements (0 when not comparable).
	Count int
	// Want and Got hold the first differing element's bytes.
	Want, Got []byte
}

// DiffTensors compares got to want tensor by tensor, in sorted name order,
// and lists every difference: bit-exact, no tolerance.
func DiffTensors(want, got ops.Tensors) []TensorDiff {
	var d []TensorDiff
	for _, n := range sortedNames(want) {
		w := want[n]
		g, ok := got[n]
		if !ok {
			d = append(d, TensorDiff{Tensor: n, Problem: "missing from the output", First: -1})
			continue
		}
		if td, diff := diffTensor(n, w, g); diff {
			d = append(d, td)
		}
	}
	for _, n := range sortedNames(got) {
		if _, ok := want[n]; !ok {
			d = append(d, TensorDiff{Tensor: n, Problem: "not an expected output", First: -1})
		}
	}
	return d
}

func diffTensor(n string, w, g tensor.Tensor) (TensorDiff, bool) {
	td := TensorDiff{Tensor: n, First: -1}
	switch {
	case w.DType != g.DType:
		td.Problem = fmt.Sprintf("dtype %s, want %s", g.DType, w.DType)
		return td, true
	case w.Logical != g.Logical:
		td.Problem = fmt.Sprintf("logical format %q, want %q", g.Logical, w.Logical)
		return td, true
	case !sameShape(w.Shape, g.Shape):
		td.Problem = fmt.Sprintf("shape %v, want %v", g.Shape, w.Shape)
		return td, true
	case len(w.Data) != len(g.Data):
		td.Problem = fmt.Sprintf("%d bytes, want %d", len(g.Data), len(w.Data))
		return td, true
	case bytes.Equal(w.Data, g.Data):
		return td, false
	}
	sz := w.DType.Size()
	for i := 0; i+sz <= len(w.Data); i += sz {
		if !bytes.Equal(w.Data[i:i+sz], g.Data[i:i+sz]) {
			if td.Count == 0 {
				td.First = i / sz
				td.Want = append([]byte{}, w.Data[i:i+sz]...)
				td.Got = append([]byte{}, g.Data[i:i+sz]...)
			}
			td.Count++
		}
	}
	td.Problem = fmt.Sprintf("%d of %d elements differ; first at flat index %d%s: got %s, want %s",
		td.Count, len(w.Data)/sz, td.First, position(w.Shape, td.First), hexLE(td.Got), hexLE(td.Want))
	return td, true
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// position spells a flat index as a multi-index, e.g. " [3 17]".
func position(shape []int, flat int) string {
	if len(shape) < 2 || flat < 0 {
		return ""
	}
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = flat % shape[i]
			flat /= shape[i]
		}
	}
	return fmt.Sprint(" ", idx)
}

// hexLE prints an element's little-endian bytes as one hex number.
func hexLE(b []byte) string {
	s := "0x"
	for i := len(b) - 1; i >= 0; i-- {
		s += fmt.Sprintf("%02x", b[i])
	}
	return s
}

// Result is the outcome of one golden case on one engine.
type Result struct {
	Case   CaseFile
	Engine string
	// Elements is the number of expected output elements compared.
	Elements int
	// Diffs lists the output tensors that differ; empty when the case
	// conforms.
	Diffs []TensorDiff
	// Err is set when the case could not run (engine error, unreadable
	// file); such a case does not conform.
	Err error
}

// OK reports whether the case ran and matched bit for bit.
func (r Result) OK() bool { return r.Err == nil && len(r.Diffs) == 0 }

// Check runs every case of s through e and compares the outputs with the
// expected files bit for bit. It returns one Result per case, in manifest
// order; an error only when ctx ends. This is the core of `bitexact
// certify`; other harnesses (a results directory, a CUDA backend) can
// reuse it by wrapping their outputs in an Engine.
func Check(ctx context.Context, e Engine, s *Set, opt *Options) ([]Result, error) {
	if opt == nil {
		opt = &Options{}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	name := EngineName(e)
	cases := s.Manifest.Cases
	res := make([]Result, len(cases))
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res[i] = checkCase(ctx, e, s, c)
			res[i].Engine = name
			mu.Lock()
			done++
			if opt.Progress != nil {
				opt.Progress(done, len(cases), c.Name)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return res, ctx.Err()
}

func checkCase(ctx context.Context, e Engine, s *Set, c CaseFile) Result {
	r := Result{Case: c}
	in, err := s.Inputs(c)
	if err != nil {
		r.Err = err
		return r
	}
	want, err := s.Expected(c)
	if err != nil {
		r.Err = err
		return r
	}
	for _, t := range want {
		r.Elements += t.Len()
	}
	params := ops.Params{}
	for k, v := range c.Params {
		params[k] = v
	}
	got, err := e.Run(ctx, c.Op, params, in)
	if err != nil {
		r.Err = err
		return r
	}
	r.Diffs = DiffTensors(want, got)
	return r
}

// sortedNames returns the tensor names in sorted order.
func sortedNames(ts ops.Tensors) []string {
	n := make([]string, 0, len(ts))
	for k := range ts {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
