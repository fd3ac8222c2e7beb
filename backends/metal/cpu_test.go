package metal

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/golden/catalog"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

var certDir = flag.String("cert", os.Getenv("BITEXACT_CERT_DIR"), "write gate records (gate.json, gate.md) under this directory: cpu-emulation/ for the Linux check, metal-gpu/ for the Mac (default $BITEXACT_CERT_DIR)")

// The emulator is compiled once per test binary.
var emu struct {
	once sync.Once
	e    *Emulator
	secs float64
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if emu.e != nil {
		emu.e.Close()
	}
	if emu.dir != "" {
		os.RemoveAll(emu.dir)
	}
	os.Exit(code)
}

// emulator returns the compiled CPU emulation, or skips the test when no
// g++ is installed.
func emulator(t *testing.T) *Emulator {
	t.Helper()
	emu.once.Do(func() {
		dir, err := os.MkdirTemp("", "bitexact-metal-")
		if err != nil {
			emu.err = err
			return
		}
		emu.dir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		t0 := time.Now()
		emu.e, emu.err = NewEmulator(ctx, dir)
		emu.secs = time.Since(t0).Seconds()
	})
	if errors.Is(emu.err, errNoCompiler) {
		t.Skipf("Metal CPU check skipped: %v", emu.err)
	}
	if emu.err != nil {
		t.Fatal(emu.err)
	}
	return emu.e
}

// TestDeclaredSchedules holds the exported schedules to the kernels' own
// `bitexact-schedule:` lines, and every module to zero or one of them.
func TestDeclaredSchedules(t *testing.T) {
	want := map[string]gemv.Schedule{"gemv_sparse_fp4": SparseFP4Schedule, "gemv_mxfp4": MXFP4Schedule}
	for _, m := range modules {
		s, ok, err := m.declaredSchedule()
		if err != nil {
			t.Fatal(err)
		}
		w, wok := want[m.Name]
		if ok != wok || s != w {
			t.Errorf("module %s declares %v (%v), Go exports %v (%v)", m.Name, s, ok, w, wok)
		}
	}
	for _, k := range kernelList {
		if k.Schedule != nil && *k.Schedule != want[k.Module] {
			t.Errorf("kernel %s claims schedule %v, its module declares %v", k.Name, *k.Schedule, want[k.Module])
		}
	}
}

// TestSources checks that every module compiles to one Metal unit with the
// header inlined, and that every entry point lives in a module.
func TestSources(t *testing.T) {
	for _, m := range modules {
		src, err := m.Source()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(src, `#include "bitexact.h"`) || !strings.Contains(src, "inline uint e2m1_nvidia_code") {
			t.Errorf("module %s: header not inlined", m.Name)
		}
	}
	for name, mod := range entryPoints {
		m, err := lookupModule(mod)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := m.Source()
		if !strings.Contains(src, "kernel void "+name+"(") {
			t.Errorf("entry point %s is not defined in module %s", name, mod)
		}
	}
	for _, k := range kernelList {
		if entryPoints[k.Name] != k.Module {
			t.Errorf("kernel %s: module %s, entryPoints says %q", k.Name, k.Module, entryPoints[k.Name])
		}
	}
}

// TestKernelFor checks the claims: which parameter sets select a kernel.
func TestKernelFor(t *testing.T) {
	for _, c := range []struct {
		op   string
		p    ops.Params
		want string
	}{
		{"e2m1.encode", ops.Params{}, "e2m1_nvidia"},
		{"e2m1.encode", ops.Params{"profile": "nvidia"}, "e2m1_nvidia"},
		{"e2m1.encode", ops.Params{"profile": "sw-sm121"}, ""},
		{"fp8.encode", ops.Params{"format": "e4m3", "profile": "satfinite"}, "e4m3_satfinite"},
		{"fp8.encode", ops.Params{"format": "e5m2", "profile": "satfinite"}, ""},
		{"nvfp4.quantize", ops.Params{"recipe": "canonical", "swizzle": "1"}, "nvfp4_quantize"},
		{"nvfp4.quantize", ops.Params{"recipe": "vllm-model-exact-rcp"}, ""},
		{"mxfp4.quantize", ops.Params{"mode": "rceil", "profile": "nvidia"}, "mxfp4_quantize"},
		{"mxfp4.quantize", ops.Params{"mode": "floor", "profile": "ml_dtypes"}, ""},
		{"awq.pack", ops.Params{"layout": "awq"}, "awq_pack"},
		{"awq.pack", ops.Params{"layout": "gptq-v1"}, ""},
		{"sparse24.compress", ops.Params{"tie": "signed", "layout": "transposed"}, "sparse24_compress"},
		{"gemv.sparse_fp4", ops.Params{"schedule": "sparse-v7"}, ""},
		{"gemv.sparse_fp4", ops.Params{"schedule": SparseFP4Schedule.String(), "scale_decode": "dgx_lut"}, "sparse_fp4_gemv"},
		{"gemv.mxfp4_q8_1", ops.Params{"schedule": "mmvq"}, ""},
		{"gemv.mxfp4_q8_1", ops.Params{"schedule": MXFP4Schedule.String()}, "mxfp4_q8_1_gemv"},
		{"gemv.mxfp4_q8_1", ops.Params{"schedule": MXFP4Schedule.String(), "extra": "1"}, ""},
	} {
		k, ok := KernelFor(c.op, c.p)
		got := ""
		if ok {
			got = k.Name
		}
		if got != c.want {
			t.Errorf("KernelFor(%s, %v) = %q, want %q", c.op, c.p, got, c.want)
		}
	}
}

// TestEmulatorDispatchErrors checks that the emulator refuses what it
// cannot run instead of guessing.
func TestEmulatorDispatchErrors(t *testing.T) {
	e := emulator(t)
	ctx := context.Background()
	for name := range entryPoints {
		// Every entry point is in the driver's table: a wrong buffer count
		// is reported as such, not as an unknown kernel.
		err := e.Dispatch(ctx, name, Dims{1, 1, 1}, Dims{32, 1, 1})
		if err == nil || !strings.Contains(err.Error(), "buffers, got 0") {
			t.Errorf("%s with no buffers: %v", name, err)
		}
	}
	if err := e.Dispatch(ctx, "no_such_kernel", Dims{1, 1, 1}, Dims{32, 1, 1}); err == nil || !strings.Contains(err.Error(), "unknown kernel") {
		t.Errorf("unknown kernel: %v", err)
	}
	if err := e.Dispatch(ctx, "e2m1_nvidia", Dims{1, 1, 1}, Dims{48, 1, 1}, make([]byte, 4), make([]byte, 1), u32s(1)); err == nil {
		t.Error("a threadgroup of 48 threads (1.5 SIMD groups) was accepted")
	}
	// The process survives refused dispatches.
	codes, err := dispatchUnary(ctx, e, "e2m1_nvidia", u32s(0x40400000), 1) // 3.0
	if err != nil || codes[0] != 0x5 {
		t.Errorf("E2M1(3.0) after refused dispatches = %x, %v; want 0x5 (fp4 code of 3.0)", codes, err)
	}
}

// TestMetalCPU is the Linux check: every Metal kernel, compiled as C++ and
// run on the CPU, against the golden set, bit for bit.
func TestMetalCPU(t *testing.T) {
	e := emulator(t)
	s, err := golden.Default()
	if err != nil {
		t.Fatalf("loading the embedded golden set: %v", err)
	}
	t.Logf("Metal CPU check: compiled %d modules as one C++ unit with %s (%s) in %.1fs", len(modules), e.Compiler, strings.Join(cxxFlags, " "), emu.secs)
	if e.Warnings != "" {
		t.Logf("compiler diagnostics:\n%s", e.Warnings)
	}
	t.Logf("what a pass verifies: %s", emulatorVerifies)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	vs, err := runSuite(ctx, e, s)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, v := range vs {
		covered[v.Kernel] = true
		t.Logf("  %-18s %-17s %-4s %9d outputs %6.2fs  %s", v.Kernel, v.Check, v.Result, v.Inputs, v.Seconds, v.Detail)
		if v.Result != "pass" {
			t.Errorf("%s (%s): %s", v.Kernel, v.Check, v.Detail)
		}
	}
	var missing []string
	for _, k := range kernelList {
		if !covered[k.Name] {
			missing = append(missing, k.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("kernels without any verdict (no golden case claims them): %v", missing)
	}
	if *certDir != "" {
		dir := filepath.Join(*certDir, "cpu-emulation")
		c := newCertificate("bitexact Metal CPU check (backends/metal, g++ emulation; not an Apple GPU)", e, s, "embedded golden/data", vs)
		if err := c.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		t.Logf("certificate written to %s", dir)
	}
}

// TestScheduleMatters checks that the check can fail: on the golden
// inputs, each GEMV's outputs differ from the reference evaluated under a
// schedule one step away from the declared one (a sequential lane sum
// instead of the butterfly, unfused instead of fused accumulation, 64
// lanes instead of 32), so a kernel that drifted from its declaration
// would be caught. (The MXFP4 GEMV's fusion is indistinguishable on these
// inputs; TestMXFP4FusedMatters covers it.)
func TestScheduleMatters(t *testing.T) {
	e := emulator(t)
	s, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op, inputs string
		claim      gemv.Schedule
	}{
		{"gemv.sparse_fp4", "gemv.sparse_fp4.sparse-v7", SparseFP4Schedule},
		{"gemv.mxfp4_q8_1", "gemv.mxfp4_q8_1.mmvq", MXFP4Schedule},
	} {
		cf, ok := s.Case(c.inputs)
		if !ok {
			t.Fatalf("golden set has no case %s", c.inputs)
		}
		in, err := s.Inputs(cf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := NewEngine(e).Run(context.Background(), c.op, ops.Params{"schedule": c.claim.String()}, in)
		if err != nil {
			t.Fatal(err)
		}
		seq, unfused, wide := c.claim, c.claim, c.claim
		seq.Reduce, seq.Width = gemv.Sequential, 0
		unfused.Fused = false
		wide.Lanes = 64
		others := []gemv.Schedule{seq, unfused, wide}
		if c.op == "gemv.mxfp4_q8_1" {
			others = []gemv.Schedule{seq, wide} // fusion: TestMXFP4FusedMatters
		}
		for _, other := range others {
			want, err := ops.Run(c.op, ops.Params{"schedule": other.String()}, in)
			if err != nil {
				t.Fatal(err)
			}
			d := golden.DiffTensors(want, got)
			if len(d) == 0 {
				t.Errorf("%s: the kernel also matches the reference under %s; the golden inputs do not tell it from the declared %s", c.op, other, c.claim)
				continue
			}
			t.Logf("%s vs reference under %s: %s (as expected)", c.op, other, d[0].Problem)
		}
	}
}

// TestMXFP4FusedMatters: on the golden inputs the MXFP4 GEMV's products
// d * sum are exact in float32 (d has 11 significant bits and the random
// signed sums stay under 2^13), so fused and unfused accumulation agree
// there. These inputs (positive sums near the 16*12*127 maximum, d with a
// full fp16 mantissa) make the products inexact, so the kernel must match
// its declared fma=1 and differ from fma=0.
func TestMXFP4FusedMatters(t *testing.T) {
	e := emulator(t)
	const n, nb = 256, 32
	r := catalog.NewRNG(0x6d786661)
	w := make([]byte, n*nb*17)
	// Codes 3, 5 and 7 (kvalues 3, 6 and 12) times q8 in 100..127, all
	// positive: odd half-block sums of about 14 significant bits, so
	// products d * sum of up to 25.
	codes := []byte{3, 5, 7}
	for b := 0; b < len(w); b += 17 {
		w[b] = byte(120 + r.Intn(11))
		for j := 1; j < 17; j++ {
			w[b+j] = codes[r.Intn(3)] | codes[r.Intn(3)]<<4
		}
	}
	act := make([]byte, nb*36)
	for b := 0; b < len(act); b += 36 {
		d := half.EncodeFP16(float32(math.Ldexp(1+float64(r.Unit()), -8)))
		act[b], act[b+1] = byte(d), byte(d>>8)
		for j := 0; j < 32; j++ {
			act[b+4+j] = byte(100 + r.Intn(28))
		}
	}
	in := ops.Tensors{"w": tensor.FromU8([]int{n, nb, 17}, w), "act": tensor.FromU8([]int{nb, 36}, act)}
	got, err := NewEngine(e).Run(context.Background(), "gemv.mxfp4_q8_1", ops.Params{"schedule": MXFP4Schedule.String()}, in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ops.Run("gemv.mxfp4_q8_1", ops.Params{"schedule": MXFP4Schedule.String()}, in)
	if err != nil {
		t.Fatal(err)
	}
	if d := golden.DiffTensors(want, got); len(d) > 0 {
		t.Errorf("kernel vs reference under its declared schedule: %s", d[0].Problem)
	}
	unfused := MXFP4Schedule
	unfused.Fused = false
	other, err := ops.Run("gemv.mxfp4_q8_1", ops.Params{"schedule": unfused.String()}, in)
	if err != nil {
		t.Fatal(err)
	}
	d := golden.DiffTensors(other, got)
	if len(d) == 0 {
		t.Fatal("fused and unfused references agree on inputs built to separate them")
	}
	t.Logf("kernel matches fma=1; vs fma=0: %s (as expected)", d[0].Problem)
}

// TestDeclaredScheduleSpec pins the spec string the gemv_mxfp4 module
// declares, as the reference parses it.
func TestDeclaredScheduleSpec(t *testing.T) {
	m, err := lookupModule("gemv_mxfp4")
	if err != nil {
		t.Fatal(err)
	}
	s, ok, err := m.declaredSchedule()
	if err != nil || !ok {
		t.Fatalf("declaredSchedule: ok=%v, err=%v", ok, err)
	}
	if got, want := s.String(), "chunk=16,lanes=32,group=16,fma=1,acc=fp32,partial=fp32,reduce=butterfly32,out=fp32"; got != want {
		t.Errorf("schedule %s, want %s", got, want)
	}
}

// TestSoftwareHalf holds metal_compat.h's software half (the type the
// kernels read fp16 activations through) to refimpl/half: every binary16
// value to float32, and float32 to binary16 on every exponent and
// mantissa top with the low 13 bits at each rounding edge, plus random
// bit patterns.
func TestSoftwareHalf(t *testing.T) {
	e := emulator(t)
	var in []uint32
	for hi := uint32(0); hi < 1<<19; hi++ {
		for _, lo := range []uint32{0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF} {
			in = append(in, hi<<13|lo)
		}
	}
	r := catalog.NewRNG(0x68616c66)
	for i := 0; i < 1<<20; i++ {
		in = append(in, r.Uint32())
	}
	x := make([]byte, 4*len(in))
	for i, v := range in {
		binary.LittleEndian.PutUint32(x[4*i:], v)
	}
	h := make([]byte, 2*len(in))
	all := make([]byte, 2*65536)
	for i := 0; i < 65536; i++ {
		binary.LittleEndian.PutUint16(all[2*i:], uint16(i))
	}
	back := make([]byte, 4*65536)
	if err := e.Dispatch(context.Background(), "bx_half_selftest", Dims{1, 1, 1}, Dims{32, 1, 1}, x, h, all, back, u32s(uint32(len(in)))); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, v := range in {
		want := half.EncodeFP16(math.Float32frombits(v))
		if got := binary.LittleEndian.Uint16(h[2*i:]); got != want && bad < 10 {
			bad++
			t.Errorf("half(float32 bits %#08x) = %#04x, refimpl/half.EncodeFP16 gives %#04x", v, got, want)
		}
	}
	for i := 0; i < 65536; i++ {
		want := math.Float32bits(half.DecodeFP16(uint16(i)))
		if got := binary.LittleEndian.Uint32(back[4*i:]); got != want && bad < 20 {
			bad++
			t.Errorf("float(half %#04x) = %#08x, refimpl/half.DecodeFP16 gives %#08x", i, got, want)
		}
	}
	t.Logf("%d float32 -> binary16 and 65536 binary16 -> float32 conversions compared", len(in))
}

// TestGEMVBound checks the fallback verdict both ways: the kernels'
// outputs on the golden inputs lie within refimpl/gemv's bound, and an
// output moved far off does not.
func TestGEMVBound(t *testing.T) {
	e := emulator(t)
	s, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op, inputs string
		p          ops.Params
	}{
		{"gemv.sparse_fp4", "gemv.sparse_fp4.sparse-v7", ops.Params{"schedule": SparseFP4Schedule.String()}},
		{"gemv.mxfp4_q8_1", "gemv.mxfp4_q8_1.mmvq", ops.Params{"schedule": MXFP4Schedule.String()}},
	} {
		cf, _ := s.Case(c.inputs)
		in, err := s.Inputs(cf)
		if err != nil {
			t.Fatal(err)
		}
		if c.op == "gemv.sparse_fp4" {
			// Active rows 0 and 3 (experts 3 and 9, the NaN scale), to keep
			// the exact sums quick.
			ex := in["experts"].I32()
			k := in["act"].Shape[1]
			act := in["act"].Bits16()
			in["experts"] = tensor.FromI32([]int{2}, []int32{ex[0], ex[3]})
			in["act"] = tensor.FromBits16(tensor.F16, []int{2, k}, append(append([]uint16(nil), act[:k]...), act[3*k:4*k]...))
		}
		got, err := NewEngine(e).Run(context.Background(), c.op, c.p, in)
		if err != nil {
			t.Fatal(err)
		}
		y := got["y"]
		br, err := gemvBound(c.op, c.p, in, y)
		if err != nil {
			t.Fatal(err)
		}
		if br.Within != br.Outputs {
			t.Errorf("%s: %d of %d kernel outputs within the bound; first outside: %s", c.op, br.Within, br.Outputs, br.First)
		}
		// The sparse inputs hold one NaN scale (expert 9, column 5).
		if wantNF := map[string]int{"gemv.sparse_fp4": 1}[c.op]; br.NonFinite != wantNF {
			t.Errorf("%s: %d non-finite outputs, want %d", c.op, br.NonFinite, wantNF)
		}
		bad := tensor.Tensor{DType: y.DType, Shape: y.Shape, Data: append([]byte(nil), y.Data...)}
		v := bad.F32()
		v[0] = v[0]*1.5 + 1
		bad = tensor.FromF32(y.Shape, v)
		br2, err := gemvBound(c.op, c.p, in, bad)
		if err != nil {
			t.Fatal(err)
		}
		if br2.Within != br.Within-1 || br2.First == "" {
			t.Errorf("%s: a perturbed output 0 still counts as within (%d of %d)", c.op, br2.Within, br2.Outputs)
		}
		t.Logf("%s: %d of %d within bound (%d non-finite); perturbed: %s", c.op, br.Within, br.Outputs, br.NonFinite, br2.First)
	}
}

// noBackend fails every dispatch: bad inputs must be refused before one.
type noBackend struct{}

func (noBackend) Dispatch(context.Context, string, Dims, Dims, ...[]byte) error {
	return errors.New("dispatched")
}
func (noBackend) Describe() BackendInfo { return BackendInfo{} }

// TestBadInputs: each runner refuses malformed inputs with an error that
// names the problem, without dispatching.
func TestBadInputs(t *testing.T) {
	f32 := func(shape ...int) tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return tensor.FromF32(shape, make([]float32, n))
	}
	u8 := func(v byte, shape ...int) tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = v
		}
		return tensor.FromU8(shape, b)
	}
	sched := ops.Params{"schedule": SparseFP4Schedule.String()}
	sparseIn := func() ops.Tensors {
		return ops.Tensors{"comp": u8(0, 1, 4, 8), "meta": u8(0x44, 1, 2, 8), "scales": u8(0x38, 1, 1, 8),
			"global": f32(1), "act": tensor.FromBits16(tensor.F16, []int{16}, make([]uint16, 16)),
			"experts": tensor.FromI32([]int{1}, []int32{0})}
	}
	for _, c := range []struct {
		name, op string
		p        ops.Params
		in       ops.Tensors
		want     string
	}{
		{"e2m1 missing x", "e2m1.encode", nil, ops.Tensors{}, `missing input tensor "x"`},
		{"e2m1 U8 x", "e2m1.encode", nil, ops.Tensors{"x": u8(0, 4)}, `"x"`},
		{"nvfp4 K=8", "nvfp4.quantize", nil, ops.Tensors{"x": f32(2, 8)}, "not a multiple of 16"},
		{"nvfp4 global NaN", "nvfp4.quantize", ops.Params{"global": "nan"}, ops.Tensors{"x": f32(1, 16)}, "finite"},
		{"mxfp4 K=16", "mxfp4.quantize", nil, ops.Tensors{"x": f32(1, 16)}, "not a multiple of 32"},
		{"awq nibble 16", "awq.pack", nil, ops.Tensors{"q": u8(16, 2, 8)}, "not a 4-bit value"},
		{"awq zeros shape", "awq.pack", nil, ops.Tensors{"q": u8(1, 4, 8), "zeros": u8(1, 3, 8)}, `"zeros"`},
		{"sparse24 K=4", "sparse24.compress", nil, ops.Tensors{"codes": u8(1, 2, 4)}, "multiple of 8"},
		{"sparse24 code 16", "sparse24.compress", nil, ops.Tensors{"codes": u8(16, 2, 8)}, "not a 4-bit E2M1 code"},
		{"sparse gemv expert out of range", "gemv.sparse_fp4", sched, func() ops.Tensors {
			in := sparseIn()
			in["experts"] = tensor.FromI32([]int{1}, []int32{1})
			return in
		}(), "out of range"},
		{"sparse gemv act length", "gemv.sparse_fp4", sched, func() ops.Tensors {
			in := sparseIn()
			in["act"] = tensor.FromBits16(tensor.F16, []int{8}, make([]uint16, 8))
			return in
		}(), `"act"`},
		{"mxfp4 gemv act blocks", "gemv.mxfp4_q8_1", ops.Params{"schedule": MXFP4Schedule.String()},
			ops.Tensors{"w": u8(0, 2, 2, 17), "act": u8(0, 1, 36)}, `"act"`},
	} {
		_, err := NewEngine(noBackend{}).Run(context.Background(), c.op, c.p, c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "dispatched") {
			t.Errorf("%s: err = %v, want one containing %q before any dispatch", c.name, err, c.want)
		}
	}
}

// TestSparse24WithScales covers what the golden sparse24 cases do not: a
// batched input with block scales (transposed by transpose_u8) and a
// global scale passed through, against ops.Run.
func TestSparse24WithScales(t *testing.T) {
	e := emulator(t)
	const ex, n, k = 3, 16, 64
	r := catalog.NewRNG(0x73323473)
	codes := make([]byte, ex*n*k)
	for i := range codes {
		codes[i] = byte(r.Intn(16))
	}
	sc := make([]byte, ex*n*k/16)
	for i := range sc {
		sc[i] = byte(r.Uint32())
	}
	ct := tensor.FromU8([]int{ex, n, k}, codes)
	ct.Logical = "e2m1"
	st := tensor.FromU8([]int{ex, n, k / 16}, sc)
	st.Logical = "e4m3"
	in := ops.Tensors{"codes": ct, "scales": st, "global": tensor.FromF32([]int{ex}, []float32{1, 0.5, 0.25})}
	for _, p := range []ops.Params{{"layout": "transposed", "tie": "cutlass"}, {"layout": "rowmajor", "tie": "signed"}} {
		want, err := ops.Run("sparse24.compress", p, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := NewEngine(e).Run(context.Background(), "sparse24.compress", p, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range golden.DiffTensors(want, got) {
			t.Errorf("%v: %s: %s", p, d.Tensor, d.Problem)
		}
	}
}

// TestNVFP4Global covers the caller-given per-tensor scale (the golden
// cases compute it from the amax), including 0 and the float32 extremes.
func TestNVFP4Global(t *testing.T) {
	e := emulator(t)
	s, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nvfp4.blocks.edge.canonical", "nvfp4.matrix.f32.canonical"} {
		cf, ok := s.Case(name)
		if !ok {
			t.Fatalf("no golden case %s", name)
		}
		in, err := s.Inputs(cf)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []string{"0", "1e-40", "0.001", "1", "448", "3.4028234663852886e38"} {
			for _, sw := range []string{"0", "1"} {
				p := ops.Params{"global": g, "swizzle": sw}
				want, err := ops.Run("nvfp4.quantize", p, in)
				if err != nil {
					t.Fatal(err)
				}
				got, err := NewEngine(e).Run(context.Background(), "nvfp4.quantize", p, in)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range golden.DiffTensors(want, got) {
					t.Errorf("%s %v: %s: %s", name, p, d.Tensor, d.Problem)
				}
			}
		}
	}
}
