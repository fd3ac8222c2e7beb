package wasm

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm/internal/guestbuild"
)

// shared is one Runtime for the tests that only need the embedded module;
// instantiating costs a fraction of a second per instance.
var shared = sync.OnceValues(func() (*Runtime, error) {
	return New(context.Background(), Options{Instances: 2})
})

func sharedRuntime(t testing.TB) *Runtime {
	t.Helper()
	r, err := shared()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// testModule is the guest built with the bitexact_wasmtest tag, which adds
// the test.* ops (panic, hang, exit, oom, sandbox). It needs the Go
// toolchain, so tests using it skip under -short.
var testModule = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "bitexact-wasm-test")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "test.wasm")
	if err := guestbuild.Build(context.Background(), "", ".", out, "bitexact_wasmtest"); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
})

func testRuntime(t *testing.T, opt Options) *Runtime {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: builds the test guest with the Go toolchain")
	}
	m, err := testModule()
	if err != nil {
		t.Fatal(err)
	}
	opt.CacheDir = testCacheDir
	r, err := newRuntime(context.Background(), opt, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// testCacheDir is a compilation cache shared by the tests' runtimes of the
// test module, so that it is compiled once per test binary.
var testCacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bitexact-wasm-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testCacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestModuleUpToDate rebuilds the guest with the flags of `make wasm` and
// requires the embedded refimpl.wasm to be byte-identical: golden data is
// generated through the embedded module, so a stale one would silently
// certify old reference code.
func TestModuleUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: rebuilds the guest with the Go toolchain (run plain go test, or make wasm)")
	}
	ctx := context.Background()
	have, err := guestbuild.GoVersion(ctx, "")
	if err != nil {
		t.Skipf("no usable go command to rebuild the module: %v", err)
	}
	if want := ModuleGoVersion(); have != want {
		t.Skipf("refimpl.wasm was built by %s, the go command is %s: byte identity needs the same toolchain, so staleness cannot be checked here (rebuild with make wasm under %s)", want, have, want)
	}
	out := filepath.Join(t.TempDir(), "refimpl.wasm")
	if err := guestbuild.Build(ctx, "", ".", out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, module) {
		t.Fatalf("wasm/refimpl.wasm is stale (rebuilt %d bytes differ from the embedded %d bytes): run `make wasm` (or `go generate ./wasm`) and commit the result", len(got), len(module))
	}
}

func TestModuleDigest(t *testing.T) {
	if d := ModuleDigest(); !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(d) {
		t.Fatalf("ModuleDigest() = %q, want 64 lowercase hex digits", d)
	}
	m := Module()
	m[0] ^= 0xff // a copy: the embedded bytes must not change
	if Module()[0] == m[0] {
		t.Fatal("Module() returned the embedded slice, not a copy")
	}
	if v := ModuleGoVersion(); !strings.HasPrefix(v, "go1.") {
		t.Fatalf("ModuleGoVersion() = %q, want a go1.x version", v)
	}
}

func TestNamesMatchNative(t *testing.T) {
	got, err := sharedRuntime(t).Names(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := ops.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("guest ops %v, native %v: the embedded module is stale (make wasm)", got, want)
	}
}

// TestErrorsMatchNative: op errors cross the boundary as the same message
// the native call gives, so a command reports them identically either way.
func TestErrorsMatchNative(t *testing.T) {
	r := sharedRuntime(t)
	name := "no.such_op"
	var anyOp ops.Op
	if n := ops.Names(); len(n) > 0 {
		anyOp, _ = ops.Lookup(n[0])
	}
	cases := []struct {
		name string
		op   string
		p    ops.Params
		in   ops.Tensors
	}{
		{"unknown op", name, nil, nil},
		{"unknown parameter", anyOp.Name, ops.Params{"no_such_param": "1"}, nil},
		{"missing input", anyOp.Name, nil, nil},
		{"negative dimension", anyOp.Name, nil, allInputs(anyOp, tensor.Tensor{DType: tensor.U8, Shape: []int{-1}})},
		{"short data", anyOp.Name, nil, allInputs(anyOp, tensor.Tensor{DType: tensor.F32, Shape: []int{3}, Data: make([]byte, 11)})},
		{"unknown dtype", anyOp.Name, nil, allInputs(anyOp, tensor.Tensor{DType: "Q7", Shape: []int{1}, Data: []byte{1}})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.op == "" {
				t.Skip("no op registered yet")
			}
			_, nerr := ops.Run(c.op, c.p, c.in)
			_, werr := r.Run(context.Background(), c.op, c.p, c.in)
			if nerr == nil || werr == nil {
				t.Fatalf("native error %v, wasm error %v: want both to fail", nerr, werr)
			}
			if nerr.Error() != werr.Error() {
				t.Fatalf("wasm error\n  %v\nnative error\n  %v", werr, nerr)
			}
		})
	}
}

func allInputs(op ops.Op, t tensor.Tensor) ops.Tensors {
	in := ops.Tensors{}
	for _, k := range op.Inputs {
		in[k] = t
	}
	return in
}

// TestRunMatchesNative runs every registered op on generically built
// inputs, natively and in the guest, and requires byte-identical outputs
// (or identical error messages where the inputs do not fit the op). Inputs
// are generic tensors and, over a few rounds, the outputs of other ops
// under the same tensor names (encode feeds decode, quantize feeds
// dequantize and GEMV). The full per-golden-case cross-check lives in
// cmd/conformance.
func TestRunMatchesNative(t *testing.T) {
	r := sharedRuntime(t)
	ctx := context.Background()
	ok := map[string]int{}
	var produced []ops.Tensors // outputs of successful native runs
	kept := map[string]int{}
	for round := 0; round < 3; round++ {
		var next []ops.Tensors
		for _, name := range ops.Names() {
			op, _ := ops.Lookup(name)
			for _, c := range genericCases(op, produced) {
				nout, nerr := ops.Run(name, c.p, c.in)
				wout, werr := r.Run(ctx, name, c.p, c.in)
				if (nerr == nil) != (werr == nil) || (nerr != nil && nerr.Error() != werr.Error()) {
					t.Errorf("%s %s: native error %v, wasm error %v", name, c.desc, nerr, werr)
					continue
				}
				if nerr != nil {
					continue
				}
				if err := sameTensors(nout, wout); err != nil {
					t.Errorf("%s %s: %v", name, c.desc, err)
				}
				ok[name]++
				if kept[name] < 3 { // a few per op, so that every producer feeds the next round
					kept[name]++
					next = append(next, nout)
				}
			}
		}
		produced = append(produced, next...)
	}
	var ran, errored []string
	for _, name := range ops.Names() {
		if ok[name] > 0 {
			ran = append(ran, fmt.Sprintf("%s(%d)", name, ok[name]))
		} else {
			errored = append(errored, name)
		}
	}
	t.Logf("compared outputs of %d ops: %s", len(ran), strings.Join(ran, " "))
	if len(errored) > 0 {
		t.Logf("no generic input fits %d ops (compared their error messages only): %s", len(errored), strings.Join(errored, " "))
	}
}

func sameTensors(want, got ops.Tensors) error {
	if len(want) != len(got) {
		return fmt.Errorf("native has %d outputs, wasm %d", len(want), len(got))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return fmt.Errorf("wasm lacks output %q", k)
		}
		if !w.Equal(g) {
			i := 0
			for i < len(w.Data) && i < len(g.Data) && w.Data[i] == g.Data[i] {
				i++
			}
			return fmt.Errorf("output %q differs: native %s%v %q %d bytes, wasm %s%v %q %d bytes, first differing byte %d",
				k, w.DType, w.Shape, w.Logical, len(w.Data), g.DType, g.Shape, g.Logical, len(g.Data), i)
		}
	}
	return nil
}

type genericCase struct {
	desc string
	p    ops.Params
	in   ops.Tensors
}

var alternatives = regexp.MustCompile(`^\s*([\w.-]+(?:\s*\|\s*[\w.-]+)+)`)

// paramChoices reads the alternatives an op documents for each parameter
// ("e4m3 | e5m2 (required)") and returns every combination (capped).
// Parameters without listed alternatives are left to their defaults.
func paramChoices(op ops.Op) []ops.Params {
	combos := []ops.Params{{}}
	keys := make([]string, 0, len(op.Params))
	for k := range op.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := alternatives.FindStringSubmatch(op.Params[k])
		if m == nil {
			continue
		}
		var next []ops.Params
		for _, c := range combos {
			for _, v := range strings.Split(m[1], "|") {
				p := ops.Params{}
				for kk, vv := range c {
					p[kk] = vv
				}
				p[k] = strings.TrimSpace(v)
				next = append(next, p)
			}
		}
		if len(next) > 64 {
			next = next[:64]
		}
		combos = next
	}
	return combos
}

// inputKinds are the generic inputs tried for every input of an op: one
// kind at a time, so that multi-input ops get consistent shapes.
func inputKinds() []inputKind {
	f32 := func(shape ...int) func(*rand.Rand) tensor.Tensor {
		return func(rng *rand.Rand) tensor.Tensor { return tensor.FromF32(shape, sampleF32(rng, prod(shape))) }
	}
	bits := func(d tensor.DType, logical string, shape ...int) func(*rand.Rand) tensor.Tensor {
		return func(rng *rand.Rand) tensor.Tensor {
			b := make([]byte, prod(shape)*d.Size())
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return tensor.Tensor{DType: d, Shape: shape, Logical: logical, Data: b}
		}
	}
	// matvec gives the vector operand of a GEMV (x, act) K elements and
	// every other input an N x K matrix.
	matvec := func(d tensor.DType, n, k int) func(*rand.Rand, string) tensor.Tensor {
		return func(rng *rand.Rand, name string) tensor.Tensor {
			shape := []int{n, k}
			if name == "x" || name == "act" {
				shape = []int{k}
			}
			// Finite values of moderate size: GEMV references reject
			// NaN and infinity inputs.
			v := make([]uint32, prod(shape))
			for i := range v {
				x := float32(rng.NormFloat64())
				if d == tensor.F16 {
					v[i] = uint32(half.EncodeFP16(x))
				} else {
					v[i] = math.Float32bits(x)
				}
			}
			if d == tensor.F16 {
				u := make([]uint16, len(v))
				for i, x := range v {
					u[i] = uint16(x)
				}
				return tensor.FromBits16(d, shape, u)
			}
			return tensor.FromBits32(d, shape, v)
		}
	}
	anyName := func(f func(*rand.Rand) tensor.Tensor) func(*rand.Rand, string) tensor.Tensor {
		return func(rng *rand.Rand, _ string) tensor.Tensor { return f(rng) }
	}
	kinds := []inputKind{
		{"F32 matvec[8,128]", matvec(tensor.F32, 8, 128)},
		{"F16 matvec[8,128]", matvec(tensor.F16, 8, 128)},
	}
	for _, k := range []struct {
		desc string
		t    func(*rand.Rand) tensor.Tensor
	}{
		{"F32[32]", f32(32)},
		{"F32[4,32]", f32(4, 32)},
		{"F32[128,128]", f32(128, 128)},
		{"U8[32]", bits(tensor.U8, "", 32)},
		{"U8[4,32]", bits(tensor.U8, "", 4, 32)},
		{"U8[4,16]", bits(tensor.U8, "", 4, 16)},
		{"BF16[4,32]", bits(tensor.BF16, "", 4, 32)},
		{"F16[4,32]", bits(tensor.F16, "", 4, 32)},
		{"I32[4,32]", bits(tensor.I32, "", 4, 32)},
	} {
		kinds = append(kinds, inputKind{k.desc, anyName(k.t)})
	}
	return kinds
}

type inputKind struct {
	desc string
	t    func(rng *rand.Rand, input string) tensor.Tensor
}

func prod(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// sampleF32 mixes the values where conversions disagree (zeros, infinities,
// NaNs, subnormals, ties) with random magnitudes over the whole range.
func sampleF32(rng *rand.Rand, n int) []float32 {
	special := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x00000001, 0x807fffff,
		0x3f800000, 0x3f400000, 0x40a00000, 0x43e00000, 0x47700000, 0x7f7fffff, 0x3e800000, 0xbf200000}
	v := make([]float32, n)
	for i := range v {
		switch {
		case i < len(special):
			v[i] = math.Float32frombits(special[i])
		case i%3 == 0:
			v[i] = math.Float32frombits(rng.Uint32())
		default:
			v[i] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(20)-10)))
		}
	}
	return v
}

// genericCases are the parameter combinations times, for the inputs,
// each generic kind and each earlier result carrying some of the op's
// input names (the rest filled with each generic kind).
func genericCases(op ops.Op, produced []ops.Tensors) []genericCase {
	var cs []genericCase
	kinds := inputKinds()
	for _, p := range paramChoices(op) {
		for _, k := range kinds {
			rng := rand.New(rand.NewPCG(1, 2))
			in := ops.Tensors{}
			for _, name := range op.Inputs {
				in[name] = k.t(rng, name)
			}
			cs = append(cs, genericCase{desc: fmt.Sprintf("%v %s", p, k.desc), p: p, in: in})
		}
		for i, prev := range produced {
			hit := false
			for _, name := range op.Inputs {
				_, ok := prev[name]
				hit = hit || ok
			}
			if !hit {
				continue
			}
			for _, k := range kinds {
				rng := rand.New(rand.NewPCG(1, 2))
				in := ops.Tensors{}
				all := true
				for _, name := range op.Inputs {
					if t, ok := prev[name]; ok {
						in[name] = t
					} else {
						in[name] = k.t(rng, name)
						all = false
					}
				}
				cs = append(cs, genericCase{desc: fmt.Sprintf("%v earlier result %d + %s", p, i, k.desc), p: p, in: in})
				if all {
					break
				}
			}
		}
	}
	if len(cs) > 400 {
		cs = cs[:400]
	}
	return cs
}

// unarySamples are the input ranges of the unary cross-check: all 2^16 low
// halves under +0 and -0 exponents, 2^16 windows of 4 around every top
// half (each exponent and mantissa-top boundary, approached from both
// sides), and random windows.
func unarySamples() [][2]uint32 {
	s := [][2]uint32{{0, 1 << 16}, {0x80000000, 1 << 16}, {0xffff0000, 1 << 16}, {0x7f7f0000, 1 << 17}}
	for hi := uint32(0); hi < 1<<16; hi++ {
		s = append(s, [2]uint32{hi<<16 - 2, 4})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 64; i++ {
		s = append(s, [2]uint32{rng.Uint32(), 4096})
	}
	return s
}

func TestUnaryMatchesNative(t *testing.T) {
	r := sharedRuntime(t)
	samples := unarySamples()
	for _, c := range unary.All() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			w := c.Width()
			// One guest call for all windows would hide nothing; calling
			// per window exercises start handling at every boundary.
			checked := 0
			for _, s := range samples {
				n := int(s[1]) * w
				a, b := make([]byte, n), make([]byte, n)
				c.EncodeRange(s[0], a)
				if err := r.Unary(context.Background(), c.Name, s[0], b); err != nil {
					t.Fatal(err)
				}
				checked += len(a)
				if !bytes.Equal(a, b) {
					for i := range a {
						if a[i] != b[i] {
							x := s[0] + uint32(i/w)
							t.Fatalf("input %#08x: native code byte %#02x, wasm %#02x", x, a[i], b[i])
						}
					}
				}
			}
			if checked == 0 {
				t.Fatal("no samples")
			}
		})
	}
}

// TestUnaryChunks: a range longer than one guest call, an odd trailing
// byte of a 2-byte conversion left untouched (as natively), and an
// unknown name.
func TestUnaryChunks(t *testing.T) {
	r := sharedRuntime(t)
	for _, c := range unary.All() {
		n := 3*unaryChunk/2 + 1
		a, b := make([]byte, n), make([]byte, n)
		a[n-1], b[n-1] = 0xA5, 0xA5
		start := uint32(0xfff00000) // wraps past 0xFFFFFFFF
		c.EncodeRange(start, a)
		if err := r.Unary(context.Background(), c.Name, start, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: %d-byte range differs from native", c.Name, n)
		}
	}
	if err := r.Unary(context.Background(), "e9m9/none", 0, make([]byte, 4)); err == nil || !strings.Contains(err.Error(), `unknown conversion "e9m9/none"`) {
		t.Fatalf("unknown conversion: error %v", err)
	}
}

// TestRequestBufferReuse runs requests of growing, shrinking and failing
// sizes on one instance, whose request buffer is reused (not zeroed) and
// replaced when far larger than a request: every output must still equal
// the native one. Sizes in fp8.encode elements; 20 Mi (80 MiB) exceeds the
// guest's keepSlack, so the next small request gets a fresh buffer.
func TestRequestBufferReuse(t *testing.T) {
	ctx := context.Background()
	r, err := New(ctx, Options{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	p := ops.Params{"format": "e4m3", "profile": "satfinite"}
	sizes := []int{1 << 20, 3, -1, 0, 1<<20 + 5, 20 << 20, 7, 1 << 20}
	if testing.Short() {
		sizes = []int{1 << 16, 3, -1, 0, 1<<16 + 5, 7}
	}
	for i, n := range sizes {
		pi, fail := p, n < 0
		if fail { // an op error between two runs
			pi, n = ops.Params{"format": "e9m9", "profile": "satfinite"}, 9
		}
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		v := make([]float32, n)
		for j := range v {
			v[j] = float32(rng.NormFloat64() * 300)
		}
		in := ops.Tensors{"x": tensor.FromF32([]int{n}, v)}
		want, werr := ops.Run("fp8.encode", pi, in)
		got, gerr := r.Run(ctx, "fp8.encode", pi, in)
		if fail != (werr != nil) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("request %d (%d elements): error %v, native %v", i, n, gerr, werr)
		}
		if len(got) != len(want) {
			t.Fatalf("request %d (%d elements): %d outputs, native %d", i, n, len(got), len(want))
		}
		for k, w := range want {
			if g := got[k]; !g.Equal(w) {
				t.Fatalf("request %d (%d elements): output %q differs from native", i, n, k)
			}
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	r := sharedRuntime(t)
	c := unary.All()[0]
	want := make([]byte, 1<<16)
	c.EncodeRange(0x3f000000, want)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]byte, len(want))
			if err := r.Unary(context.Background(), c.Name, 0x3f000000, got); err != nil {
				errs <- err
			} else if !bytes.Equal(got, want) {
				errs <- errors.New("concurrent result differs")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestGuestPanicIsError(t *testing.T) {
	r := testRuntime(t, Options{Instances: 1})
	_, err := r.Run(context.Background(), "test.panic", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "op test.panic: panic in the reference") || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("error %v, want the recovered panic naming the op", err)
	}
	checkUsable(t, r)
}

// checkUsable: after a failure the pool still serves calls (a failed
// instance is replaced).
func checkUsable(t *testing.T, r *Runtime) {
	t.Helper()
	out, err := r.Run(context.Background(), "test.sandbox", nil, nil)
	if err != nil || len(out["rand"].Data) != 16 {
		t.Fatalf("after the failure: %v, %v", out, err)
	}
}

func TestCancellationStopsGuest(t *testing.T) {
	r := testRuntime(t, Options{Instances: 1})
	// Compile and instantiate the cancellable variant first, so that the
	// deadline below falls while the guest loops.
	warm, cancelWarm := context.WithCancel(context.Background())
	if _, err := r.Run(warm, "test.sandbox", nil, nil); err != nil {
		t.Fatal(err)
	}
	cancelWarm()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, "test.hang", nil, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "op test.hang") {
			t.Fatalf("error %v, want a deadline error naming the op", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the guest loop did not stop within a minute of its deadline")
	}
	checkUsable(t, r)
}

func TestGuestExitIsError(t *testing.T) {
	r := testRuntime(t, Options{Instances: 1})
	_, err := r.Run(context.Background(), "test.exit", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "op test.exit") || !strings.Contains(err.Error(), "exit_code(3)") {
		t.Fatalf("error %v, want an exit error naming the op", err)
	}
	checkUsable(t, r)
}

func TestMemoryLimit(t *testing.T) {
	r := testRuntime(t, Options{Instances: 1, MemoryLimitPages: 4096}) // 256 MiB
	_, err := r.Run(context.Background(), "test.oom", nil, nil)
	if !errors.Is(err, ErrInputTooLarge) || !strings.Contains(err.Error(), "op test.oom") || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("error %v, want an input-too-large error naming the op", err)
	}
	checkUsable(t, r)
}

// TestCallLimit: a call may grow the guest's memory only to a limit set
// from its request size, not to the whole 4 GiB an instance can address:
// a tiny request that allocates without end stops at 64 MiB with an
// error saying the input is too large.
func TestCallLimit(t *testing.T) {
	r := testRuntime(t, Options{Instances: 1})
	_, err := r.Run(context.Background(), "test.oom", nil, nil)
	if !errors.Is(err, ErrInputTooLarge) || !strings.Contains(err.Error(), "input too large: op test.oom on a ") ||
		!strings.Contains(err.Error(), "more than the 64 MiB of guest memory allowed") {
		t.Fatalf("error %v", err)
	}
	checkUsable(t, r)
}

// TestSandbox: the guest sees no arguments, environment or files, a clock
// stopped at the epoch, and the same random stream in every instance.
func TestSandbox(t *testing.T) {
	t.Setenv("BITEXACT_SANDBOX_PROBE", "leak")
	var reports []string
	var rands [][]byte
	for i := 0; i < 2; i++ {
		r := testRuntime(t, Options{Instances: 1})
		out, err := r.Run(context.Background(), "test.sandbox", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, string(out["report"].Data))
		rands = append(rands, out["rand"].Data)
	}
	rep := reports[0]
	for _, want := range []string{"args=\n", "env=\n", "now=1970-01-01T00:00:00Z\n"} {
		if !strings.Contains(rep, want) {
			t.Errorf("sandbox report lacks %q:\n%s", want, rep)
		}
	}
	if strings.Contains(rep, "open=ok") {
		t.Errorf("the guest opened a host file:\n%s", rep)
	}
	if reports[0] != reports[1] || !bytes.Equal(rands[0], rands[1]) {
		t.Errorf("two instances saw different worlds:\n%s %x\n%s %x", reports[0], rands[0], reports[1], rands[1])
	}
}

func TestInterpreterMatchesCompiler(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: compiles the module for the interpreter")
	}
	ri, err := New(context.Background(), Options{Instances: 1, Interpreter: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ri.Close(context.Background())
	rc := sharedRuntime(t)
	for _, c := range unary.All() {
		a, b := make([]byte, 1<<14), make([]byte, 1<<14)
		if err := ri.Unary(context.Background(), c.Name, 0x3e000000, a); err != nil {
			t.Fatal(err)
		}
		if err := rc.Unary(context.Background(), c.Name, 0x3e000000, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: interpreter and compiler differ", c.Name)
		}
	}
}

func TestClose(t *testing.T) {
	r, err := New(context.Background(), Options{Instances: 1, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := r.Run(context.Background(), "x", nil, nil); !errors.Is(err, errClosed) {
		t.Fatalf("Run after Close: %v", err)
	}
}

func TestOptionsErrors(t *testing.T) {
	_, err := New(context.Background(), Options{MemoryLimitPages: 65537})
	if err == nil || !strings.Contains(err.Error(), "MemoryLimitPages 65537") {
		t.Fatalf("error %v", err)
	}
	_, err = newRuntime(context.Background(), Options{NoCache: true}, []byte("\x00asm\x01\x00\x00\x00"))
	if err == nil || !strings.Contains(err.Error(), "does not export bitexact_") {
		t.Fatalf("empty module: error %v", err)
	}
}

// TestVariantsShareBudget: with one instance allowed, calls alternating
// between a plain and a cancellable context evict each other's idle
// instance instead of waiting forever, and both variants give the same
// bytes.
func TestVariantsShareBudget(t *testing.T) {
	r, err := New(context.Background(), Options{Instances: 1, CacheDir: testCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	c := unary.All()[0]
	want := make([]byte, 4096)
	c.EncodeRange(0x3f000000, want)
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i, ctx := range []context.Context{context.Background(), cancellable, context.Background(), cancellable} {
		got := make([]byte, len(want))
		done := make(chan error, 1)
		go func() { done <- r.Unary(ctx, c.Name, 0x3f000000, got) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("call %d did not get an instance within a minute", i)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("call %d (cancellable %v): result differs from native", i, ctx.Done() != nil)
		}
	}
}

var exhaustive = flag.Bool("wasm.exhaustive", false, "compare every unary conversion over all 2^32 inputs, native vs wasm (minutes per conversion)")

// TestUnaryExhaustive compares native and guest codes for all 2^32 inputs
// of every conversion. It is opt-in (-wasm.exhaustive): the guest runs a
// conversion at 10-30 M codes/s per core, so a full pass over all
// conversions takes about half an hour on 2 cores. Subtests are named by
// conversion, for -run filtering. The sampled
// TestUnaryMatchesNative runs by default.
func TestUnaryExhaustive(t *testing.T) {
	if !*exhaustive {
		t.Skip("opt-in: go test ./wasm -run UnaryExhaustive -wasm.exhaustive -timeout 0")
	}
	r, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	const block = 1 << 24
	for _, c := range unary.All() {
		t.Run(c.Name, func(t *testing.T) {
			w := c.Width()
			want, got := make([]byte, block*w), make([]byte, block*w)
			for start := uint64(0); start < 1<<32; start += block {
				encodeParallel(c, uint32(start), want)
				if err := r.Unary(context.Background(), c.Name, uint32(start), got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, got) {
					for i := range want {
						if want[i] != got[i] {
							t.Fatalf("input %#08x: native code byte %#02x, wasm %#02x", uint32(start)+uint32(i/w), want[i], got[i])
						}
					}
				}
			}
		})
	}
}

// encodeParallel is c.EncodeRange(start, out) split over the CPUs.
func encodeParallel(c unary.Conversion, start uint32, out []byte) {
	w, parts := c.Width(), runtime.NumCPU()
	codes := len(out) / w
	var wg sync.WaitGroup
	for i, lo := 0, 0; i < parts; i++ {
		hi := codes * (i + 1) / parts
		wg.Add(1)
		go func(s uint32, o []byte) {
			defer wg.Done()
			c.EncodeRange(s, o)
		}(start+uint32(lo), out[lo*w:hi*w])
		lo = hi
	}
	wg.Wait()
}

// TestGuestFailureOneLine: a failure of the guest is reported in one line
// (no wasm stack trace, no goroutine dump), the full error kept for
// errors.Is and errors.As.
func TestGuestFailureOneLine(t *testing.T) {
	cause := errors.New("wasm error: unreachable\nwasm stack trace:\n\t.runtime.abort()\n\t.main.call(i32)")
	h := headBuffer{}
	h.Write([]byte("panic: runtime error: makeslice: len out of range\n\ngoroutine 1 [running]:\nmain.f()\n"))
	err := error(&guestFailure{msg: "wasm: op x: the guest failed: " + firstLine(cause.Error()) + h.suffix(), err: cause})
	want := "wasm: op x: the guest failed: wasm error: unreachable (...); guest stderr: panic: runtime error: makeslice: len out of range (...)"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if !errors.Is(err, cause) {
		t.Error("the cause is not reachable through errors.Is")
	}
}
