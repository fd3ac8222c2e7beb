// Command check holds the outputs of bench.cu (ggml's MXFP4 MMVQ GEMV and
// bitexact's gemv_mxfp4_q8_1 on the same bytes, both on the H100) to the
// reference: it rebuilds the weights from bench.cu's generator, runs
// refimpl/gemv MXFP4Q81GEMV under the mmvq and mmvq-nofma schedules on
// ggml's q8_1 activation bytes, and compares each output bit for bit; it
// also compares both quantizers' q8_1 bytes with refimpl/ggml's "cuda"
// profile on bench.cu's activations.
//
// Usage: go run ./conformance/harness/ggml-mmvq/check DIR
// (DIR holds x.f32, act_ggml.q8_1, act_ours.q8_1, y_ggml.f32, y_ours.f32).
// It exits 1 when a GEMV output differs from the mmvq schedule.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ggml"
)

// The shape and generator of bench.cu.
const (
	k    = 4096
	n    = 11776
	nb   = k / 32
	seed = 20261125
)

func lcg(s *uint32) uint32 {
	*s = *s*1664525 + 1013904223
	return *s
}

// inputs repeats bench.cu's weight bytes and activations.
func inputs() (w []byte, x []float32) {
	w = make([]byte, n*nb*gemv.MXFP4BlockBytes)
	s := uint32(seed)
	for i := range w {
		v := lcg(&s) >> 24
		if i%gemv.MXFP4BlockBytes == 0 {
			v = 118 + v%16
		}
		w[i] = byte(v)
	}
	x = make([]float32, k)
	for i := range x {
		x[i] = float32(int32(lcg(&s)>>8)-8388608) * (1.0 / 8388608)
	}
	return w, x
}

func read(dir, name string, size int) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	if len(b) != size {
		return nil, fmt.Errorf("%s: %d bytes, want %d", name, len(b), size)
	}
	return b, nil
}

func floats(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

// diff counts the outputs whose bits differ and describes the first.
func diff(got, want []float32) (int, string) {
	c, first := 0, ""
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if c == 0 {
				first = fmt.Sprintf(" (first y[%d]: %08x, want %08x)", i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
			c++
		}
	}
	return c, first
}

// report is what check found: q8_1 blocks of each quantizer that differ
// from the "cuda" profile, and outputs of each GEMV that differ from each
// schedule.
type report struct {
	quant map[string]int // "ggml", "ours" -> blocks differing, of nb
	gemv  map[string]int // "y_ggml.f32 mmvq" etc. -> outputs differing, of n
	lines []string
}

func run(dir string) (*report, error) {
	w, x := inputs()
	xb, err := read(dir, "x.f32", 4*k)
	if err != nil {
		return nil, err
	}
	for i, v := range floats(xb) {
		if math.Float32bits(v) != math.Float32bits(x[i]) {
			return nil, fmt.Errorf("x.f32 differs from the generator at %d: the outputs are not from this bench.cu", i)
		}
	}
	r := &report{quant: map[string]int{}, gemv: map[string]int{}}
	blocks, err := ggml.QuantizeQ8_1(x, ggml.Q8_1CUDA)
	if err != nil {
		return nil, err
	}
	ref := ggml.AppendQ8_1(nil, blocks)
	var actG []byte
	for _, c := range []struct{ name, file, desc string }{
		{"ggml", "act_ggml.q8_1", "ggml quantize_q8_1 (-use_fast_math)"},
		{"ours", "act_ours.q8_1", "ours q8_1_quantize"},
	} {
		b, err := read(dir, c.file, nb*gemv.Q81BlockBytes)
		if err != nil {
			return nil, err
		}
		if c.name == "ggml" {
			actG = b
		}
		d := 0
		for i := 0; i < nb; i++ {
			if !bytes.Equal(b[i*36:(i+1)*36], ref[i*36:(i+1)*36]) {
				d++
			}
		}
		r.quant[c.name] = d
		r.lines = append(r.lines, fmt.Sprintf("%-36s q8_1 blocks differing from profile cuda: %d of %d", c.desc, d, nb))
	}
	for _, s := range []struct {
		name string
		s    gemv.Schedule
	}{{"mmvq", gemv.MMVQ}, {"mmvq-nofma", gemv.MMVQNoFMA}} {
		want, err := gemv.MXFP4Q81GEMV(w, actG, n, k, s.s)
		if err != nil {
			return nil, err
		}
		for _, o := range []string{"y_ggml.f32", "y_ours.f32"} {
			yb, err := read(dir, o, 4*n)
			if err != nil {
				return nil, err
			}
			d, first := diff(floats(yb), want)
			r.gemv[o+" "+s.name] = d
			r.lines = append(r.lines, fmt.Sprintf("%-12s vs schedule %-10s: %d of %d outputs differ%s", o, s.name, d, n, first))
		}
	}
	return r, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: check DIR (the files bench.cu wrote)")
		os.Exit(2)
	}
	r, err := run(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(2)
	}
	for _, l := range r.lines {
		fmt.Println(l)
	}
	if r.gemv["y_ggml.f32 mmvq"] != 0 || r.gemv["y_ours.f32 mmvq"] != 0 {
		os.Exit(1)
	}
}
