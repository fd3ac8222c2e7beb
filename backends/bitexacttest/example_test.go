package bitexacttest_test

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/backends/bitexacttest"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// A failing check names the first differing inputs, decoded field by
// field, and the bug class. This encoder keeps the sign of a negative NaN.
func ExampleReport() {
	enc := func(x float32) uint8 {
		if x != x && math.Signbit(float64(x)) {
			return 0xf
		}
		return encodeE2M1(x)
	}
	r, err := bitexacttest.CheckUnary("e2m1/nvidia", enc, bitexacttest.Sampled(0))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Conforms)
	fmt.Println(r.First[0])
	fmt.Println(r.Diagnosis.Classes[0].Class)
	// Output:
	// false
	// x = NaN (0xff800001): want 0x07 = 6 [s=0 e=11 m=1], got 0x0f = -6 [s=1 e=11 m=1]
	// profile:cutlass
}

// A batch kernel, such as a GPU launch, gets up to 2^20 inputs per call
// and writes one code per input (one byte each for codes up to 8 bits).
//
//	func TestE4M3Kernel(t *testing.T) {
//		bitexacttest.UnaryBatch(t, "e4m3/satfinite", launch)
//	}
func ExampleUnaryBatch() {
	launch := func(in []float32, out []byte) error {
		for i, x := range in { // stands for a kernel launch
			out[i] = fp8.E4M3.Encode(x, fp8.Satfinite)
		}
		return nil
	}
	r, err := bitexacttest.CheckUnaryBatch("e4m3/satfinite", launch, bitexacttest.Sampled(0))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Verdict())
	// Output:
	// e4m3/satfinite: CONFORMS on 1066516 inputs (sampled: 17940 golden inputs and 1048576 random inputs, seed 0xb17e7ac7)
}

// A block op: the kernel reads the task's inputs by name and fills the
// outputs the task expects. In a _test.go file:
//
//	func TestNVFP4(t *testing.T) {
//		bitexacttest.Suite(t, "nvfp4", "recipe=canonical", quantize)
//	}
//
// Here the reference itself stands for the kernel.
func ExampleSuite() {
	quantize := func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
		res, err := ops.Run("nvfp4.quantize", in.Params(), ops.Tensors{"x": in.Tensor("x")})
		if err != nil {
			return bitexacttest.Outputs{}, err
		}
		out := in.Outputs()
		for _, name := range out.Names() { // packed, scales, global
			out.Set(name, res[name])
		}
		return out, nil
	}
	r, err := bitexacttest.CheckSuite("nvfp4", "recipe=canonical", quantize)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Subject, r.Conforms)
	// Output:
	// nvfp4 recipe=canonical,swizzle=0 true
}

// A kernel that reads bfloat16 (or, with CheckUnaryFromFP16, IEEE
// binary16) is held on all 2^16 input patterns, each expected to encode
// as its exactly widened float32 value. In a _test.go file:
//
//	func TestBF16ToE4M3(t *testing.T) {
//		bitexacttest.UnaryFromBF16(t, "e4m3/satfinite", encode)
//	}
func ExampleCheckUnaryFromBF16() {
	encode := func(h uint16) uint8 {
		return fp8.E4M3.Encode(half.DecodeBF16(h), fp8.Satfinite)
	}
	r, err := bitexacttest.CheckUnaryFromBF16("e4m3/satfinite", encode)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Verdict())
	// Output:
	// e4m3/satfinite: CONFORMS on 65536 inputs (every bf16 input (2^16))
}

// A GEMV whose summation order is not fixed (split-K with atomics) is
// gated against the rigorous error bound of the exact product, under the
// bound model it declares: here float32 products (mul32=1), float32 out,
// summed in any order. The verdict says it is a bound, not bit-exactness.
func ExampleCheckSuite_bound() {
	gemv := func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
		w, x := in.F32("w"), in.F32("x")
		out := in.Outputs()
		y := out.F32("y")
		k := len(x)
		for r := range y {
			var acc float32
			for i := k - 1; i >= 0; i-- { // backwards: any order is within
				acc = float32(w[r*k+i]*x[i]) + acc
			}
			y[r] = acc
		}
		return out, nil
	}
	r, err := bitexacttest.CheckSuite("gemv-bound", "mul32=1,round16=0,out=fp32", gemv)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Subject, r.Conforms)
	// Output:
	// gemv-bound mul32=1,round16=0,out=fp32 true
}
