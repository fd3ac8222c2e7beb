package metal

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
)

var certDir = flag.String("cert", os.Getenv("BITEXACT_CERT_DIR"), "write certificate.json and certificate.md of the Metal CPU check to this directory (default $BITEXACT_CERT_DIR)")

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
	if errors.Is(emu.err, ErrNoCompiler) {
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
	for _, m := range Modules {
		s, ok, err := m.DeclaredSchedule()
		if err != nil {
			t.Fatal(err)
		}
		w, wok := want[m.Name]
		if ok != wok || s != w {
			t.Errorf("module %s declares %v (%v), Go exports %v (%v)", m.Name, s, ok, w, wok)
		}
	}
	for _, k := range Kernels {
		if k.Schedule != nil && *k.Schedule != want[k.Module] {
			t.Errorf("kernel %s claims schedule %v, its module declares %v", k.Name, *k.Schedule, want[k.Module])
		}
	}
}

// TestSources checks that every module compiles to one Metal unit with the
// header inlined, and that every entry point lives in a module.
func TestSources(t *testing.T) {
	for _, m := range Modules {
		src, err := m.Source()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(src, `#include "bitexact.h"`) || !strings.Contains(src, "inline uint e2m1_nvidia_code") {
			t.Errorf("module %s: header not inlined", m.Name)
		}
	}
	for name, mod := range EntryPoints {
		m, err := LookupModule(mod)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := m.Source()
		if !strings.Contains(src, "kernel void "+name+"(") {
			t.Errorf("entry point %s is not defined in module %s", name, mod)
		}
	}
	for _, k := range Kernels {
		if EntryPoints[k.Name] != k.Module {
			t.Errorf("kernel %s: module %s, EntryPoints says %q", k.Name, k.Module, EntryPoints[k.Name])
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
		{"nvfp4.quantize", ops.Params{"recipe": "vllm-like"}, ""},
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
	for name := range EntryPoints {
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
	t.Logf("Metal CPU check: compiled %d modules as one C++ unit with %s (%s) in %.1fs", len(Modules), e.Compiler, strings.Join(CXXFlags, " "), emu.secs)
	if e.Warnings != "" {
		t.Logf("compiler diagnostics:\n%s", e.Warnings)
	}
	t.Logf("what a pass verifies: %s", EmulatorVerifies)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	vs, err := RunSuite(ctx, e, s)
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
	for _, k := range Kernels {
		if !covered[k.Name] {
			missing = append(missing, k.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("kernels without any verdict (no golden case claims them): %v", missing)
	}
	if *certDir != "" {
		c := NewCertificate("bitexact Metal CPU check (native/metal, g++ emulation)", e, s, "embedded golden/data", vs)
		if err := c.Write(*certDir); err != nil {
			t.Fatal(err)
		}
		t.Logf("certificate written to %s", *certDir)
	}
}

// TestScheduleMatters checks that the check can fail: the sparse GEMV's
// outputs differ from the reference under a schedule it does not
// implement (sequential lane reduction instead of its butterfly), so a
// kernel that drifted from its declaration would be caught.
func TestScheduleMatters(t *testing.T) {
	e := emulator(t)
	s, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op    string
		claim gemv.Schedule
	}{
		{"gemv.sparse_fp4", SparseFP4Schedule},
		{"gemv.mxfp4_q8_1", MXFP4Schedule},
	} {
		cf, ok := s.Case(c.op + func() string {
			if c.op == "gemv.sparse_fp4" {
				return ".sparse-v7"
			}
			return ".mmvq"
		}())
		if !ok {
			t.Fatalf("golden set has no input case for %s", c.op)
		}
		in, err := s.Inputs(cf)
		if err != nil {
			t.Fatal(err)
		}
		seq := c.claim
		seq.Reduce, seq.Width = gemv.Sequential, 0
		want, err := ops.Run(c.op, ops.Params{"schedule": seq.String()}, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Engine{B: e}.Run(context.Background(), c.op, ops.Params{"schedule": c.claim.String()}, in)
		if err != nil {
			t.Fatal(err)
		}
		d := golden.DiffTensors(want, got)
		if len(d) == 0 {
			t.Errorf("%s: the kernel matches the sequential-reduction reference too; the golden inputs do not tell the orders apart", c.op)
			continue
		}
		t.Logf("%s under %s vs the kernel: %s (as expected)", c.op, seq, d[0].Problem)
	}
}

func ExampleModule_DeclaredSchedule() {
	m, _ := LookupModule("gemv_mxfp4")
	s, _, _ := m.DeclaredSchedule()
	fmt.Println(s)
	// Output: chunk=16,lanes=32,group=16,fma=1,acc=fp32,partial=fp32,reduce=butterfly32,out=fp32
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
	r := golden.NewRNG(0x68616c66)
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
