//go:build cuda

package conformance

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/catalog"
	"github.com/bitexact/bitexact/native/cuda"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// TestLargeRandom runs every tensor kernel on inputs larger than the golden
// cases (many thread blocks, grid-stride loops, the benchmark shapes of the
// GEMVs) and compares with the reference run in the same process with the
// same parameters; for the GEMVs the parameters name the kernel's declared
// schedule as a spec string, so the reference evaluates exactly that.
func TestLargeRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("large random cases skipped under -short")
	}
	rng := catalog.NewRNG(0xB17E)
	f32s := func(n int, scale float32) tensor.Tensor {
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Normal() * scale * float32(math.Ldexp(1, rng.Intn(9)-4))
		}
		return tensor.FromF32([]int{n}, v)
	}
	mat := func(x tensor.Tensor, r, c int) tensor.Tensor { x.Shape = []int{r, c}; return x }
	f16s := func(shape []int, scale float32) tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		h := make([]uint16, n)
		for i := range h {
			h[i] = half.EncodeFP16(rng.Normal() * scale)
		}
		return tensor.FromBits16(tensor.F16, shape, h)
	}
	u8s := func(shape []int, f func() byte) tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = f()
		}
		return tensor.FromU8(shape, b)
	}
	code := func() byte { return byte(rng.Intn(16)) }
	validMeta := func() byte {
		pairs := sparse24.MetaNibbles
		return pairs[rng.Intn(6)] | pairs[rng.Intn(6)]<<4
	}
	scaleByte := func() byte { return byte(0x20 + rng.Intn(0x30)) } // finite E4M3, 2^-3 .. 2^3
	const E, A, K, N = 64, 10, 2048, 512
	experts := make([]int32, A)
	for i := range experts {
		experts[i] = int32(rng.Intn(E))
	}
	globals := make([]float32, E)
	for i := range globals {
		globals[i] = float32(math.Ldexp(1, rng.Intn(6)-3)) * (1 + rng.Unit())
	}
	sparseIn := ops.Tensors{
		"comp": u8s([]int{E, K / 4, N}, func() byte { return code() | code()<<4 }),
		"meta": u8s([]int{E, K / 8, N}, validMeta), "scales": u8s([]int{E, K / 16, N}, scaleByte),
		"global": tensor.FromF32([]int{E}, globals), "act": f16s([]int{A, K}, 1),
		"experts": tensor.FromI32([]int{A}, experts),
	}
	const MK, MN = 4096, 1024
	w := make([]byte, 0, MN*(MK/32)*17)
	for i := 0; i < MN*(MK/32); i++ {
		w = append(w, byte(100+rng.Intn(50)))
		for j := 0; j < 16; j++ {
			w = append(w, byte(rng.Intn(256)))
		}
	}
	act := make([]byte, 0, (MK/32)*36)
	for i := 0; i < MK/32; i++ {
		act = binary.LittleEndian.AppendUint16(act, half.EncodeFP16(rng.Unit()*0.01))
		act = binary.LittleEndian.AppendUint16(act, 0)
		for j := 0; j < 32; j++ {
			act = append(act, byte(rng.Intn(256)))
		}
	}
	codes := u8s([]int{4, 256, 2048}, code)
	codes.Logical = "e2m1"
	cases := []struct {
		name string
		op   string
		p    ops.Params
		in   ops.Tensors
	}{
		{"nvfp4 1024x4096", "nvfp4.quantize", ops.Params{}, ops.Tensors{"x": mat(f32s(1024*4096, 1), 1024, 4096)}},
		{"nvfp4 1024x4096 swizzled", "nvfp4.quantize", ops.Params{"swizzle": "1"}, ops.Tensors{"x": mat(f32s(1000*4096, 3), 1000, 4096)}},
		{"nvfp4 given global", "nvfp4.quantize", ops.Params{"global": "0x1p-3"}, ops.Tensors{"x": mat(f32s(256*512, 1), 256, 512)}},
		{"mxfp4 floor", "mxfp4.quantize", ops.Params{"mode": "floor"}, ops.Tensors{"x": mat(f32s(1024*4096, 1), 1024, 4096)}},
		{"mxfp4 rceil", "mxfp4.quantize", ops.Params{"mode": "rceil"}, ops.Tensors{"x": mat(f32s(512*4096, 1), 512, 4096)}},
		{"mxfp4 even", "mxfp4.quantize", ops.Params{"mode": "even"}, ops.Tensors{"x": mat(f32s(512*4096, 1), 512, 4096)}},
		{"mxfp4 ceil", "mxfp4.quantize", ops.Params{"mode": "ceil"}, ops.Tensors{"x": mat(f32s(512*4096, 1), 512, 4096)}},
		{"awq forge 4096x1024 g128", "awq.quantize", ops.Params{"group": "128"}, ops.Tensors{"w": f16s([]int{4096, 1024}, 0.05)}},
		{"awq forge 1024x1000 g64", "awq.quantize", ops.Params{"group": "64"}, ops.Tensors{"w": f16s([]int{1024, 1000}, 0.05)}},
		{"sparse24 rowmajor", "sparse24.compress", ops.Params{"tie": "lower-index"}, ops.Tensors{"codes": codes}},
		{"sparse24 transposed cutlass", "sparse24.compress", ops.Params{"tie": "cutlass", "layout": "transposed"}, ops.Tensors{"codes": codes}},
		{"sparse24 transposed signed", "sparse24.compress", ops.Params{"tie": "signed", "layout": "transposed"}, ops.Tensors{"codes": codes}},
		{"sparse gemv v7 10 of 64 experts", "gemv.sparse_fp4", ops.Params{"schedule": cuda.V7Schedule(true, cuda.V7ReduceWidth).String()}, sparseIn},
		{"sparse gemv v7 nofma", "gemv.sparse_fp4", ops.Params{"schedule": cuda.V7Schedule(false, cuda.V7ReduceWidth).String()}, sparseIn},
		{"sparse gemv v7 sequential", "gemv.sparse_fp4", ops.Params{"schedule": cuda.V7Schedule(true, 1).String()}, sparseIn},
		{"mxfp4 gemv mmvq 4096x1024", "gemv.mxfp4_q8_1", ops.Params{"schedule": cuda.MMVQSchedule(true).String()},
			ops.Tensors{"w": tensor.FromU8([]int{MN, MK / 32, 17}, w), "act": tensor.FromU8([]int{MK / 32, 36}, act)}},
		{"mxfp4 gemv mmvq-nofma", "gemv.mxfp4_q8_1", ops.Params{"schedule": cuda.MMVQSchedule(false).String()},
			ops.Tensors{"w": tensor.FromU8([]int{MN, MK / 32, 17}, w), "act": tensor.FromU8([]int{MK / 32, 36}, act)}},
		{"q8_1 cuda", "ggml.q8_1.quantize", ops.Params{"s": "cuda"}, ops.Tensors{"x": f32s(32*4096, 2)}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	per := map[string]*Verdict{}
	for _, c := range cases {
		k, ok := cuda.KernelFor(c.op, c.p)
		if !ok {
			t.Errorf("%s: no kernel claims %s %v", c.name, c.op, c.p)
			continue
		}
		want, err := ops.Run(c.op, c.p, c.in)
		if err != nil {
			t.Fatalf("%s: reference: %v", c.name, err)
		}
		t0 := time.Now()
		got, err := engine.Run(ctx, c.op, c.p, c.in)
		v := per[k.Name]
		if v == nil {
			v = &Verdict{Kernel: k.Name, Claim: claimOf(k), Check: "random", Reference: "refimpl/ops run in this process with the same parameters", Result: "pass"}
			per[k.Name] = v
		}
		v.Seconds += time.Since(t0).Seconds()
		if err != nil {
			v.Result, v.Detail = "fail", c.name+": "+err.Error()
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		n := 0
		for _, tt := range want {
			n += tt.Len()
		}
		v.Inputs += uint64(n)
		if d := golden.DiffTensors(want, got); len(d) > 0 {
			v.Result, v.Detail = "fail", c.name+": "+d[0].Tensor+": "+d[0].Problem
			t.Errorf("%s (%s %v): %s: %s (%d differ)", c.name, c.op, c.p, d[0].Tensor, d[0].Problem, d[0].Count)
			continue
		}
		t.Logf("%-32s %-18s ok (%d output elements)", c.name, k.Name, n)
	}
	for _, v := range per {
		if v.Result == "pass" {
			v.Detail = "outputs compared element by element"
		}
		record(*v)
	}
}
