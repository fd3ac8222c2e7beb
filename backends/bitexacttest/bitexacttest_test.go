package bitexacttest_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/backends/bitexacttest"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// recorder is a testing.TB that keeps what a check reports instead of
// failing the test that runs it. Only the methods the package calls are
// overridden; Fatal returns, so the package must return after it.
type recorder struct {
	testing.TB
	errors, fatals, logs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Error(a ...any)            { r.errors = append(r.errors, fmt.Sprint(a...)) }
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatal(a ...any)            { r.fatals = append(r.fatals, fmt.Sprint(a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatals = append(r.fatals, fmt.Sprintf(f, a...)) }
func (r *recorder) Log(a ...any)              { r.logs = append(r.logs, fmt.Sprint(a...)) }
func (r *recorder) Logf(f string, a ...any)   { r.logs = append(r.logs, fmt.Sprintf(f, a...)) }

// outcome is what a check reported: "pass", "error: ..." or "fatal: ...".
func (r *recorder) outcome() string {
	switch {
	case len(r.fatals) > 0:
		return "fatal: " + strings.Join(r.fatals, "\n")
	case len(r.errors) > 0:
		return "error: " + strings.Join(r.errors, "\n")
	}
	return "pass"
}

// check runs a gate on a recorder and asserts what it reported: the
// outcome's kind and, for a failure, lines it must contain.
func check(t *testing.T, gate func(testing.TB), want string, contains ...string) {
	t.Helper()
	r := &recorder{TB: t}
	gate(r)
	got := r.outcome()
	t.Logf("reported %s", got)
	if !strings.HasPrefix(got, want) {
		t.Fatalf("outcome:\n%s\nwant %s", got, want)
	}
	for _, s := range contains {
		if !strings.Contains(got, s) {
			t.Errorf("report does not contain %q:\n%s", s, got)
		}
	}
	if want == "pass" && len(r.logs) == 0 {
		t.Errorf("a passing check logged nothing")
	}
}

func sampled() bitexacttest.Option { return bitexacttest.Sampled(1 << 16) }

func TestUnary(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gate     func(testing.TB)
		want     string
		contains []string
	}{
		{"correct", func(tb testing.TB) { bitexacttest.Unary(tb, "e2m1/nvidia", encodeE2M1, sampled()) }, "pass", nil},
		{"nan-sign-kept", func(tb testing.TB) { bitexacttest.Unary(tb, "e2m1/nvidia", nanSignKept, sampled()) }, "error",
			[]string{
				"e2m1/nvidia: DOES NOT CONFORM: ",
				"x = NaN (0xff800001): want 0x07 = 6 [s=0 e=11 m=1], got 0x0f = -6 [s=1 e=11 m=1]",
				"conforms to cutlass, sw-sm121; differs from ggml on 5807, ml_dtypes on 47, nvidia on 24",
				"diagnosis: explained by profile:cutlass",
				"golden set " + golden.SuiteVersion + ", manifest sha256:",
			}},
		{"one-tie-away", func(tb testing.TB) { bitexacttest.Unary(tb, "e2m1/nvidia", tieAt2_5, sampled()) }, "error",
			[]string{
				"x = 2.5 (0x40200000): want 0x04 = 2 [s=0 e=10 m=0], got 0x05 = 3 [s=0 e=10 m=1]",
				"x = -2.5 (0xc0200000): want 0x0c = -2 [s=1 e=10 m=0], got 0x0d = -3 [s=1 e=10 m=1]",
				"diagnosis: no known bug class explains all",
			}},
		{"batch", func(tb testing.TB) { bitexacttest.UnaryBatch(tb, "e2m1/nvidia", batch(encodeE2M1), sampled()) }, "pass", nil},
		{"batch-wrong", func(tb testing.TB) { bitexacttest.UnaryBatch(tb, "e2m1/nvidia", batch(nanSignKept), sampled()) }, "error",
			[]string{"explained by profile:cutlass"}},
		{"batch-error", func(tb testing.TB) {
			bitexacttest.UnaryBatch(tb, "e2m1/nvidia", func([]float32, []byte) error { return fmt.Errorf("launch failed") }, sampled())
		}, "fatal", []string{"launch failed"}},
		{"batch-concurrent", func(tb testing.TB) {
			bitexacttest.UnaryBatch(tb, "e2m1/nvidia", batch(encodeE2M1), sampled(), bitexacttest.Concurrent(), bitexacttest.Workers(3))
		}, "pass", nil},
		{"batch-16-bit", func(tb testing.TB) {
			bitexacttest.UnaryBatch(tb, "fp16/rne", func(in []float32, out []byte) error {
				for i, x := range in {
					h := half.EncodeFP16(x)
					out[2*i], out[2*i+1] = byte(h), byte(h>>8)
				}
				return nil
			}, sampled())
		}, "pass", nil},
		{"max-reported", func(tb testing.TB) {
			bitexacttest.Unary(tb, "e2m1/nvidia", tieAt2_5, sampled(), bitexacttest.MaxReported(1), bitexacttest.Seed(7))
		}, "error", []string{"x = 2.5 (0x40200000)", "  ... and 1 more", "random inputs, seed 0x7"}},
		{"16-bit", func(tb testing.TB) { bitexacttest.Unary(tb, "bf16/rne", half.EncodeBF16, sampled()) }, "pass", nil},
		{"16-bit-wrong", func(tb testing.TB) {
			// Truncation instead of round to nearest even.
			bitexacttest.Unary(tb, "bf16/rne", func(x float32) uint16 { return uint16(math.Float32bits(x) >> 16) }, sampled())
		}, "error", []string{"bf16/rne: DOES NOT CONFORM", "[s=0 e="}},
		{"from-bf16", func(tb testing.TB) {
			bitexacttest.UnaryFromBF16(tb, "e2m1/nvidia", func(h uint16) uint8 { return encodeE2M1(half.DecodeBF16(h)) })
		}, "pass", nil},
		{"from-fp16-wrong", func(tb testing.TB) {
			bitexacttest.UnaryFromFP16(tb, "e2m1/nvidia", func(h uint16) uint8 { return tieAt2_5(half.DecodeFP16(h)) })
		}, "error", []string{"e2m1/nvidia: DOES NOT CONFORM: 2 of 65536 inputs differ (every fp16 input (2^16))",
			"x = 2.5 (fp16 0x4100)", "profiles on every fp16 input: conforms to no profile", "no known bug class explains all 2 mismatches"}},
		{"unknown-conversion", func(tb testing.TB) { bitexacttest.Unary(tb, "e2m1/nvidai", encodeE2M1) }, "fatal",
			[]string{`unknown conversion "e2m1/nvidai"`, "e2m1/nvidia, ", "e4m3/satfinite"}},
		{"wide-code", func(tb testing.TB) {
			bitexacttest.Unary(tb, "e4m3/satfinite", func(x float32) uint16 { return 0 })
		}, "fatal", []string{"e4m3/satfinite has 8-bit codes: the encoder must return uint8"}},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.gate, tc.want, tc.contains...) })
	}
}

func batch(f func(float32) uint8) func(in []float32, out []byte) error {
	return func(in []float32, out []byte) error {
		if len(out) != len(in) {
			return fmt.Errorf("%d inputs, %d output bytes", len(in), len(out))
		}
		for i, x := range in {
			out[i] = f(x)
		}
		return nil
	}
}

// e4m3 is an E4M3 kernel of the e4m3 suite under profile p, written
// through the typed accessors; name is the output it writes.
func e4m3(p fp8.Profile, name string) func(bitexacttest.Inputs) (bitexacttest.Outputs, error) {
	return func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
		x := in.F32("x")
		out := in.Outputs()
		codes := out.U8(name)
		for i, v := range x {
			if codes != nil {
				codes[i] = fp8.E4M3.Encode(v, p)
			}
		}
		return out, nil
	}
}

func TestSuite(t *testing.T) {
	nvfp4 := func(rename string) func(bitexacttest.Inputs) (bitexacttest.Outputs, error) {
		return func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
			res, err := ops.Run("nvfp4.quantize", in.Params(), ops.Tensors{"x": in.Tensor("x")})
			if err != nil {
				return bitexacttest.Outputs{}, err
			}
			out := in.Outputs()
			for n, v := range res {
				if n == rename {
					n += "_"
				}
				out.Set(n, v)
			}
			return out, nil
		}
	}
	for _, tc := range []struct {
		name     string
		gate     func(testing.TB)
		want     string
		contains []string
	}{
		{"correct", func(tb testing.TB) { bitexacttest.Suite(tb, "e4m3", "satfinite", e4m3(fp8.Satfinite, "codes")) }, "pass", nil},
		{"profile-key", func(tb testing.TB) { bitexacttest.Suite(tb, "e4m3", "profile=satfinite", e4m3(fp8.Satfinite, "codes")) }, "pass", nil},
		{"other-profile", func(tb testing.TB) { bitexacttest.Suite(tb, "e4m3", "satfinite", e4m3(fp8.NoSat, "codes")) }, "error",
			[]string{"e4m3 satfinite: DOES NOT CONFORM: ", "task edges.e4m3: codes[", "from x = ",
				"conforms to nosat; differs from satfinite on ", "diagnosis: explained by profile:nosat", "reference wasm sha256:"}},
		{"misnamed-output", func(tb testing.TB) { bitexacttest.Suite(tb, "e4m3", "satfinite", e4m3(fp8.Satfinite, "code")) }, "fatal",
			[]string{`no output "code" (the task's outputs: codes U8[`, `output codes U8[`, "not written"}},
		{"misnamed-input", func(tb testing.TB) {
			bitexacttest.Suite(tb, "e4m3", "satfinite", func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
				in.F32("input")
				return in.Outputs(), nil
			})
		}, "fatal", []string{`suite e4m3, task edges.e4m3: no input "input" (its inputs: x F32[`}},
		{"wrong-dtype", func(tb testing.TB) {
			bitexacttest.Suite(tb, "e4m3", "satfinite", func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
				out := in.Outputs()
				out.F32("codes")
				return out, nil
			})
		}, "fatal", []string{"output codes U8[", "written as F32"}},
		{"wrong-shape", func(tb testing.TB) {
			bitexacttest.Suite(tb, "e4m3", "satfinite", func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
				out := in.Outputs()
				out.Set("codes", tensor.FromU8([]int{3}, []byte{1, 2, 3}))
				return out, nil
			})
		}, "fatal", []string{"output codes U8[3] e4m3, want codes U8["}},
		{"kernel-error", func(tb testing.TB) {
			bitexacttest.Suite(tb, "e4m3", "satfinite", func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
				return bitexacttest.Outputs{}, fmt.Errorf("out of memory")
			})
		}, "fatal", []string{"suite e4m3, task edges.e4m3: the kernel: out of memory"}},
		{"no-outputs", func(tb testing.TB) {
			bitexacttest.Suite(tb, "e4m3", "satfinite", func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
				return bitexacttest.Outputs{}, nil
			})
		}, "fatal", []string{"returned no Outputs (build them with in.Outputs())"}},
		{"unknown-profile", func(tb testing.TB) { bitexacttest.Suite(tb, "e4m3", "sat", e4m3(fp8.Satfinite, "codes")) }, "fatal",
			[]string{`suite e4m3 has no profile "sat" (its profiles: nosat, satfinite)`, `value "sat", want one of nosat, satfinite`}},
		{"unknown-key", func(tb testing.TB) { bitexacttest.Suite(tb, "nvfp4", "recipe=canonical,swizle=0", nvfp4("")) }, "fatal",
			[]string{`key "swizle": unknown key (keys: recipe, swizzle)`}},
		// One spelling per claim: spaces are refused with the canonical
		// spelling; reordered keys name the same profile.
		{"spaced-profile", func(tb testing.TB) { bitexacttest.Suite(tb, "nvfp4", "recipe=canonical, swizzle=0", nvfp4("")) }, "fatal",
			[]string{`write it as "recipe=canonical,swizzle=0"`}},
		{"reordered-profile", func(tb testing.TB) { bitexacttest.Suite(tb, "nvfp4", "swizzle=0,recipe=canonical", nvfp4("")) }, "pass", nil},
		{"unknown-suite", func(tb testing.TB) { bitexacttest.Suite(tb, "nvfp5", "recipe=canonical", nvfp4("")) }, "fatal",
			[]string{`unknown suite "nvfp5" (suites: e2m1, `}},
		{"nvfp4", func(tb testing.TB) { bitexacttest.Suite(tb, "nvfp4", "recipe=canonical", nvfp4("")) }, "pass", nil},
		{"nvfp4-misnamed", func(tb testing.TB) { bitexacttest.Suite(tb, "nvfp4", "recipe=canonical", nvfp4("scales")) }, "fatal",
			[]string{`no output "scales_"`, "not written"}},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.gate, tc.want, tc.contains...) })
	}
}

// A claimed profile the golden set holds no case of for some task is
// checked against outputs the wasm reference computes, as certify does.
func TestSuiteComputed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the wasm reference")
	}
	kernel := func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
		res, err := ops.Run("mxfp4.quantize", in.Params(), ops.Tensors{"x": in.Tensor("x")})
		if err != nil {
			return bitexacttest.Outputs{}, err
		}
		out := in.Outputs()
		for n, v := range res {
			out.Set(n, v)
		}
		return out, nil
	}
	r, err := bitexacttest.CheckSuite("mxfp4", "mode=floor,profile=cutlass", kernel)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Conforms {
		t.Fatal(r)
	}
	computed := 0
	for _, c := range r.Golden.Cases {
		if c.Expected == "computed" {
			computed++
		}
	}
	if computed == 0 {
		t.Errorf("no task of mxfp4 mode=floor,profile=cutlass was computed: pick a pair the golden set lacks")
	}
}

// A GEMV kernel may be held to any schedule spec string (llama.cpp's CPU
// ggml_vec_dot_mxfp4_q8_0 order here); a malformed spec is an error.
func TestSuiteScheduleSpec(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the wasm reference")
	}
	const llamaCPU = "chunk=0,lanes=0,group=32,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32"
	kernel := func(schedule string) func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
		return func(in bitexacttest.Inputs) (bitexacttest.Outputs, error) {
			res, err := ops.Run("gemv.mxfp4_q8_1", ops.Params{"schedule": schedule}, ops.Tensors{"w": in.Tensor("w"), "act": in.Tensor("act")})
			if err != nil {
				return bitexacttest.Outputs{}, err
			}
			out := in.Outputs()
			for n, v := range res {
				out.Set(n, v)
			}
			return out, nil
		}
	}
	r, err := bitexacttest.CheckSuite("gemv-mxfp4", llamaCPU, kernel(llamaCPU))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Conforms {
		t.Fatal(r)
	}
	if r, err = bitexacttest.CheckSuite("gemv-mxfp4", llamaCPU, kernel("seq")); err != nil || r.Conforms {
		t.Errorf("the seq order held to the llama.cpp CPU spec: err %v, conforms %v", err, r != nil && r.Conforms)
	}
	if _, err := bitexacttest.CheckSuite("gemv-mxfp4", "chunk=0,lanes=0", kernel(llamaCPU)); err == nil || !strings.Contains(err.Error(), "no profile") {
		t.Errorf("a malformed spec: err %v", err)
	}
}

// The sweep over all 2^32 float32 inputs, with a correct and a wrong
// encoder: about 15 s of CPU each for this encoder, so it runs in make
// exhaustive (BITEXACT_EXHAUSTIVE=1), not in go test ./....
func TestExhaustiveUnary(t *testing.T) {
	if os.Getenv("BITEXACT_EXHAUSTIVE") != "1" {
		t.Skip("set BITEXACT_EXHAUSTIVE=1 (make exhaustive) for the 2^32-input sweeps")
	}
	check(t, func(tb testing.TB) { bitexacttest.Unary(tb, "e2m1/nvidia", encodeE2M1, bitexacttest.Exhaustive()) }, "pass")
	check(t, func(tb testing.TB) { bitexacttest.Unary(tb, "e2m1/nvidia", nanSignKept, bitexacttest.Exhaustive()) }, "error",
		"e2m1/nvidia: DOES NOT CONFORM: 8388607 of 4294967296 inputs differ (every float32 input (2^32))",
		"x = NaN (0xff800001): want 0x07", "explained by profile:cutlass")
	check(t, func(tb testing.TB) { bitexacttest.Unary(tb, "e2m1/nvidia", tieAt2_5, bitexacttest.Exhaustive()) }, "error",
		"DOES NOT CONFORM: 2 of 4294967296 inputs differ", "x = 2.5 (0x40200000)", "x = -2.5 (0xc0200000)")
}

// Every conversion of the reference resolves to its golden suite and
// profile: the reference's own encoder conforms to it, and an encoder that
// flips the low bit of every code does not.
func TestUnaryEveryConversion(t *testing.T) {
	for _, c := range unary.All() {
		t.Run(c.Name, func(t *testing.T) {
			run := func(flip uint32) (*bitexacttest.Report, error) {
				opt := bitexacttest.Sampled(1 << 12)
				if c.Width() == 1 {
					return bitexacttest.CheckUnary(c.Name, func(x float32) uint8 { return uint8(c.Encode(x) ^ flip) }, opt)
				}
				return bitexacttest.CheckUnary(c.Name, func(x float32) uint16 { return uint16(c.Encode(x) ^ flip) }, opt)
			}
			r, err := run(0)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Conforms || r.Golden == nil || r.Golden.Against != c.Profile {
				t.Errorf("the reference's encoder:\n%s", r)
			}
			if r, err = run(1); err != nil {
				t.Fatal(err)
			}
			if r.Conforms || r.Mismatches != r.Inputs {
				t.Errorf("low bit flipped: conforms %v, %d of %d differ", r.Conforms, r.Mismatches, r.Inputs)
			}
		})
	}
}
