package gate_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// goBackend runs each kernel as the reference op under the parameters in
// its own profile map: a correct kernel computes what it claims, a buggy
// one computes another profile while claiming the first.
type goBackend struct {
	kernels gate.Table[map[string]string]
	// computes maps a kernel to the e2m1 profile it really computes.
	computes map[string]string
}

func (goBackend) Name() string             { return "go" }
func (b goBackend) Kernels() []gate.Kernel { return b.kernels.Kernels() }
func (b goBackend) Launch(ctx context.Context, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	return b.kernels.Run(ctx, b.computes, k, p, in)
}

// Range makes goBackend a gate.Ranger.
func (b goBackend) Range(ctx context.Context, k gate.Kernel, start uint32, out []byte) error {
	c, err := unary.Lookup("e2m1/" + b.computes[k.Name])
	if err != nil {
		return err
	}
	c.EncodeRange(start, out)
	return nil
}

func e2m1As(ctx context.Context, computes map[string]string, k gate.Kernel, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	return ops.Run("e2m1.encode", ops.Params{"profile": computes[k.Name]}, in)
}

func newBackend(profile string) gate.Engine {
	b := goBackend{
		kernels: gate.Table[map[string]string]{{Kernel: gate.Kernel{Name: "e2m1_go", Module: "go", Conversion: "e2m1/nvidia",
			Op: "e2m1.encode", Params: ops.Params{"profile": "nvidia"}}, Launch: e2m1As}},
		computes: map[string]string{"e2m1_go": profile},
	}
	return gate.Engine{Backend: b}
}

func TestMatches(t *testing.T) {
	k := gate.Kernel{Name: "q", Op: "nvfp4.quantize", Params: ops.Params{"recipe": "canonical"},
		Optional: map[string][]string{"swizzle": {"0", "1"}, "global": nil},
		Accepts:  func(p ops.Params) bool { return p["global"] != "bad" }}
	for _, c := range []struct {
		name string
		op   string
		p    ops.Params
		want bool
	}{
		{"required value given", "nvfp4.quantize", ops.Params{"recipe": "canonical"}, true},
		{"required value by default", "nvfp4.quantize", ops.Params{}, true},
		{"other required value", "nvfp4.quantize", ops.Params{"recipe": "torchao"}, false},
		{"optional value listed", "nvfp4.quantize", ops.Params{"swizzle": "1"}, true},
		{"optional value not listed", "nvfp4.quantize", ops.Params{"swizzle": "2"}, false},
		{"optional any value", "nvfp4.quantize", ops.Params{"global": "0x1p-3"}, true},
		{"refused by Accepts", "nvfp4.quantize", ops.Params{"global": "bad"}, false},
		{"unknown parameter", "nvfp4.quantize", ops.Params{"extra": "1"}, false},
		{"other op", "mxfp4.quantize", ops.Params{}, false},
	} {
		if got := k.Matches(c.op, c.p); got != c.want {
			t.Errorf("%s: Matches(%s, %s) = %v, want %v", c.name, c.op, gate.ParamString(c.p), got, c.want)
		}
	}
	if got, want := k.Claim(), "nvfp4.quantize recipe=canonical global=any swizzle=0|1"; got != want {
		t.Errorf("Claim() = %q, want %q", got, want)
	}
}

func TestGolden(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, computes string
		pass           bool
		detail         string
	}{
		{"kernel computes its claim", "nvidia", true, "2 cases"},
		// cutlass keeps the NaN sign: -NaN -> 0xF where nvidia gives 0x7.
		{"kernel computes another profile", "cutlass", false, "want 0x07 = 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := gate.Golden(context.Background(), newBackend(c.computes), set, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Verdicts) != 1 || run.Claimed != 2 || run.Cases <= run.Claimed {
				t.Fatalf("verdicts %+v, %d of %d cases claimed; want one verdict on the 2 e2m1/nvidia cases", run.Verdicts, run.Claimed, run.Cases)
			}
			v := run.Verdicts[0]
			if (v.Result == certificate.Pass) != c.pass || !strings.Contains(v.Detail, c.detail) || (len(run.Failures) == 0) != c.pass {
				t.Errorf("verdict %s: %s (failures %q); want pass=%v and %q in the detail", v.Result, v.Detail, run.Failures, c.pass, c.detail)
			}
		})
	}
}

func TestExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("2^32 sweeps skipped under -short")
	}
	for _, c := range []struct {
		computes string
		pass     bool
	}{{"nvidia", true}, {"cutlass", false}} {
		e := newBackend(c.computes)
		v, err := gate.Exhaustive(context.Background(), e, e.Kernels()[0], runtime.GOMAXPROCS(0))
		if err != nil {
			t.Fatal(err)
		}
		if (v.Result == certificate.Pass) != c.pass || (!c.pass && !strings.Contains(v.Detail, "input 0xff8")) {
			t.Errorf("computes %s: %s: %s", c.computes, v.Result, v.Detail)
		}
	}
}

func TestSuite(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "e2m1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		computes string
		conforms bool
	}{{"nvidia", true}, {"cutlass", false}} {
		e := newBackend(c.computes)
		k := e.Kernels()[0]
		cert, err := gate.Suite(context.Background(), gate.SuiteOptions{Set: set, Suite: s, Profile: "nvidia",
			Certificate: certificate.Input{Backend: "go", Implementation: "gate test"}},
			func(ctx context.Context, t gate.Task) (ops.Tensors, error) {
				return e.RunKernel(ctx, k, t.Params, t.Inputs)
			})
		if err != nil {
			t.Fatal(err)
		}
		if cert.Conforms != c.conforms {
			t.Errorf("computes %s: %s", c.computes, cert.Verdict)
		}
		if !c.conforms && (cert.Diagnosis == nil || !strings.Contains(cert.Verdict, "conforms to `cutlass`")) {
			t.Errorf("computes cutlass: verdict %s, diagnosis %+v; want it found to conform to cutlass", cert.Verdict, cert.Diagnosis)
		}
	}
}

func TestRunWithoutClaim(t *testing.T) {
	e := newBackend("nvidia")
	_, err := e.Run(context.Background(), "e2m1.encode", ops.Params{"profile": "cutlass"}, nil)
	if err == nil || !strings.Contains(err.Error(), "go: no kernel implements e2m1.encode with {profile=cutlass}") {
		t.Errorf("err = %v", err)
	}
}

func TestProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("2^32 sweeps skipped under -short")
	}
	e := newBackend("cutlass")
	ex, err := gate.Profiles(context.Background(), e.KernelUnary(e.Kernels()[0]), "e2m1", 0, runtime.GOMAXPROCS(0))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]certificate.Exhaustive{}
	for _, x := range ex {
		seen[x.Profile] = x
		if x.Chunks != 256 {
			t.Errorf("%s: %d chunks swept, want 256", x.Conversion, x.Chunks)
		}
	}
	// cutlass and nvidia differ on the negative NaNs only (the last chunk).
	if c := seen["cutlass"]; !c.Conforms {
		t.Errorf("cutlass: %+v, want conforming", c)
	}
	if n := seen["nvidia"]; n.Conforms || n.Differing != 1 || !strings.HasPrefix(n.First, "input 0xff800001") {
		t.Errorf("nvidia: %+v, want one differing chunk, first at input 0xff800001", n)
	}
	if _, err := gate.Profiles(context.Background(), e.KernelUnary(e.Kernels()[0]), "e2m1", 257, 1); err == nil {
		t.Error("sample 257 accepted")
	}
}

func TestHeldAgainst(t *testing.T) {
	if testing.Short() {
		t.Skip("2^32 sweeps skipped under -short")
	}
	// A kernel computing cutlass, held to nvidia: cutlass keeps the sign of
	// a negative NaN (0xF) where nvidia gives 0x7.
	negNaN := func(in, want, got uint32) bool { return in >= 0xFF800001 && want == 0x7 && got == 0xF }
	for _, c := range []struct {
		name   string
		doc    gate.Documented
		result string
	}{
		{"documented exactly", gate.Documented{Where: "the negative NaNs", Count: 0xFFFFFFFF - 0xFF800001 + 1, Expected: negNaN}, certificate.ExpectedDifference},
		{"another difference documented", gate.Documented{Where: "the positive NaNs", Count: 0xFFFFFFFF - 0xFF800001 + 1,
			Expected: func(in, want, got uint32) bool { return in < 0x80000000 }}, certificate.Fail},
	} {
		e := newBackend("cutlass")
		v, err := gate.HeldAgainst(context.Background(), e, e.Kernels()[0], "e2m1/nvidia", c.doc, runtime.GOMAXPROCS(0))
		if err != nil {
			t.Fatal(err)
		}
		if v.Result != c.result {
			t.Errorf("%s: %s: %s, want %s", c.name, v.Result, v.Detail, c.result)
		}
	}
}

// TestSuiteBound: Suite runs a bound-mode suite (no expected outputs; the
// kernel gets the bound model's parameters and the certificate holds each
// output to the bound of the exact product). A float32 GEMV summing in
// row order is within mul32=1; the same with one output's exponent moved
// is not.
func TestSuiteBound(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "gemv-bound")
	if err != nil {
		t.Fatal(err)
	}
	const model = "mul32=1,round16=0,out=fp32"
	for _, broken := range []bool{false, true} {
		cert, err := gate.Suite(context.Background(), gate.SuiteOptions{Set: set, Suite: s, Profile: model, Reference: golden.Native{},
			Certificate: certificate.Input{Backend: "go", Implementation: "gate test"}},
			func(ctx context.Context, tk gate.Task) (ops.Tensors, error) {
				if tk.Params["out"] != "fp32" || len(tk.Layout) != 1 || tk.Layout[0].DType != "F32" {
					t.Fatalf("task %s: params %v, layout %+v; want the model's and one F32 y", tk.Name, tk.Params, tk.Layout)
				}
				w, x := tk.Inputs["w"], tk.Inputs["x"]
				ws, xs := w.F32(), x.F32()
				n, k := w.Shape[0], w.Shape[1]
				y := make([]float32, n)
				for r := range y {
					var acc float32
					for i := 0; i < k; i++ {
						acc = float32(ws[r*k+i]*xs[i]) + acc
					}
					y[r] = acc
				}
				if broken {
					y[n/2] *= 4
				}
				return ops.Tensors{"y": tensor.FromF32(tk.Layout[0].Shape, y)}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if cert.Conforms == broken || cert.Mode != certificate.ModeBound {
			t.Errorf("broken %v: conforms %v, mode %q: %s", broken, cert.Conforms, cert.Mode, cert.Verdict)
		}
		if !strings.Contains(cert.Verdict, "RIGOROUS BOUND") {
			t.Errorf("verdict does not say it is a bound: %s", cert.Verdict)
		}
		t.Log(cert.Verdict)
	}
}
