//go:build cuda

package conformance

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/bitexact/bitexact/backends/cuda"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/internal/golden/catalog"
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
	cases := []gate.Case{
		{Name: "nvfp4 1024x4096", Op: "nvfp4.quantize", Params: ops.Params{}, In: ops.Tensors{"x": mat(f32s(1024*4096, 1), 1024, 4096)}},
		{Name: "nvfp4 1024x4096 swizzled", Op: "nvfp4.quantize", Params: ops.Params{"swizzle": "1"}, In: ops.Tensors{"x": mat(f32s(1000*4096, 3), 1000, 4096)}},
		{Name: "nvfp4 given global", Op: "nvfp4.quantize", Params: ops.Params{"global": "0x1p-3"}, In: ops.Tensors{"x": mat(f32s(256*512, 1), 256, 512)}},
		{Name: "mxfp4 floor", Op: "mxfp4.quantize", Params: ops.Params{"mode": "floor"}, In: ops.Tensors{"x": mat(f32s(1024*4096, 1), 1024, 4096)}},
		{Name: "mxfp4 rceil", Op: "mxfp4.quantize", Params: ops.Params{"mode": "rceil"}, In: ops.Tensors{"x": mat(f32s(512*4096, 1), 512, 4096)}},
		{Name: "mxfp4 even", Op: "mxfp4.quantize", Params: ops.Params{"mode": "even"}, In: ops.Tensors{"x": mat(f32s(512*4096, 1), 512, 4096)}},
		{Name: "mxfp4 ceil", Op: "mxfp4.quantize", Params: ops.Params{"mode": "ceil"}, In: ops.Tensors{"x": mat(f32s(512*4096, 1), 512, 4096)}},
		{Name: "awq forge 4096x1024 g128", Op: "awq.quantize", Params: ops.Params{"group": "128"}, In: ops.Tensors{"w": f16s([]int{4096, 1024}, 0.05)}},
		{Name: "awq forge 1024x1000 g64", Op: "awq.quantize", Params: ops.Params{"group": "64"}, In: ops.Tensors{"w": f16s([]int{1024, 1000}, 0.05)}},
		{Name: "sparse24 rowmajor", Op: "sparse24.compress", Params: ops.Params{"tie": "lower-index"}, In: ops.Tensors{"codes": codes}},
		{Name: "sparse24 transposed cutlass", Op: "sparse24.compress", Params: ops.Params{"tie": "cutlass", "layout": "transposed"}, In: ops.Tensors{"codes": codes}},
		{Name: "sparse24 transposed signed", Op: "sparse24.compress", Params: ops.Params{"tie": "signed", "layout": "transposed"}, In: ops.Tensors{"codes": codes}},
		{Name: "sparse gemv v7 10 of 64 experts", Op: "gemv.sparse_fp4", Params: ops.Params{"schedule": cuda.V7Schedule(true, cuda.V7ReduceWidth).String()}, In: sparseIn},
		{Name: "sparse gemv v7 nofma", Op: "gemv.sparse_fp4", Params: ops.Params{"schedule": cuda.V7Schedule(false, cuda.V7ReduceWidth).String()}, In: sparseIn},
		{Name: "sparse gemv v7 sequential", Op: "gemv.sparse_fp4", Params: ops.Params{"schedule": cuda.V7Schedule(true, 1).String()}, In: sparseIn},
		{Name: "mxfp4 gemv mmvq 4096x1024", Op: "gemv.mxfp4_q8_1", Params: ops.Params{"schedule": cuda.MMVQSchedule(true).String()}, In: ops.Tensors{"w": tensor.FromU8([]int{MN, MK / 32, 17}, w), "act": tensor.FromU8([]int{MK / 32, 36}, act)}},
		{Name: "mxfp4 gemv mmvq-nofma", Op: "gemv.mxfp4_q8_1", Params: ops.Params{"schedule": cuda.MMVQSchedule(false).String()}, In: ops.Tensors{"w": tensor.FromU8([]int{MN, MK / 32, 17}, w), "act": tensor.FromU8([]int{MK / 32, 36}, act)}},
		{Name: "q8_1 cuda", Op: "ggml.q8_1.quantize", Params: ops.Params{"s": "cuda"}, In: ops.Tensors{"x": f32s(32*4096, 2)}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run, err := gate.Random(ctx, engine, cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Failures {
		t.Error(f)
	}
	for _, p := range run.Passes {
		t.Log(p)
	}
	record.Add(run.Verdicts...)
}
