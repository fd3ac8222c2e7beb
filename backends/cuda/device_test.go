//go:build cuda

package cuda

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

var testDev *Device

func device(t testing.TB) *Device {
	t.Helper()
	if testDev == nil {
		d, err := Open(0)
		if err != nil {
			t.Fatalf("no CUDA device: %v", err)
		}
		testDev = d
		overrideFromEnv(t, d)
	}
	return testDev
}

func TestOpenInfo(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	in, err := d.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", in)
	if in.Name == "" || in.SMs == 0 || in.DriverAPI < 12000 {
		t.Errorf("implausible device info %+v", in)
	}
	for _, m := range Modules {
		h, _ := m.Header()
		t.Logf("module %-8s %-13s loaded=%-5v %s", m.Name, m.Arch, d.Loaded(m.Name), h.Compiler)
	}
	if !d.Loaded("e2m1") || !d.Loaded("fp8") {
		t.Fatal("compute_89 modules not loaded")
	}
}

// TestE2M1Table pins named edge inputs of both software E2M1 kernels.
// Expected codes: refimpl/fp4 profile docs (NVIDIA: NaN -> 0x7 whatever
// its sign; SWSM121: NaN keeps its sign), and the E2M1 magnitude ladder
// 0, 0.5, 1, 1.5, 2, 3, 4, 6 with ties to even.
func TestE2M1Table(t *testing.T) {
	d := device(t)
	e := NewEngine(d)
	negNaN := math.Float32frombits(0xFFC00000)
	posNaN := math.Float32frombits(0x7FC00000)
	cases := []struct {
		name            string
		x               float32
		nvidia, swsm121 uint8
	}{
		{"tie 0.25 to 0", 0.25, 0x0, 0x0},
		{"tie 0.75 to 1", 0.75, 0x2, 0x2},
		{"tie 1.25 to 1", 1.25, 0x2, 0x2},
		{"tie 1.75 to 2", 1.75, 0x4, 0x4},
		{"tie 2.5 to 2", 2.5, 0x4, 0x4},
		{"tie 3.5 to 4", 3.5, 0x6, 0x6},
		{"tie 5 to 4", 5, 0x6, 0x6},
		{"overflow 7 saturates", 7, 0x7, 0x7},
		{"-Inf saturates", float32(math.Inf(-1)), 0xF, 0xF},
		{"-0 keeps sign", float32(math.Copysign(0, -1)), 0x8, 0x8},
		{"negative subnormal", math.Float32frombits(0x80000001), 0x8, 0x8},
		{"+NaN", posNaN, 0x7, 0x7},
		{"-NaN: the profiles differ", negNaN, 0x7, 0xF},
	}
	x := make([]float32, len(cases))
	for i, c := range cases {
		x[i] = c.x
	}
	in := ops.Tensors{"x": tensor.FromF32([]int{len(x)}, x)}
	for _, k := range []struct {
		kernel string
		want   func(i int) uint8
	}{
		{"e2m1_nvidia", func(i int) uint8 { return cases[i].nvidia }},
		{"e2m1_sw_sm121", func(i int) uint8 { return cases[i].swsm121 }},
	} {
		kk, err := e.Lookup(k.kernel)
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.RunKernel(context.Background(), kk, kk.Params, in)
		if err != nil {
			t.Fatal(err)
		}
		got := out["codes"].Data
		for i, c := range cases {
			if got[i] != k.want(i) {
				t.Errorf("%s(%s = 0x%08x) = 0x%x, want 0x%x", k.kernel, c.name, math.Float32bits(c.x), got[i], k.want(i))
			}
		}
		// The range form must agree with the tensor form.
		for i, c := range cases {
			b := make([]byte, 1)
			if err := d.rangeInto(context.Background(), k.kernel+"_range", math.Float32bits(c.x), b); err != nil {
				t.Fatal(err)
			}
			if b[0] != k.want(i) {
				t.Errorf("%s_range(%s) = 0x%x, want 0x%x", k.kernel, c.name, b[0], k.want(i))
			}
		}
	}
}

// TestLaunchErrorNamesKernel: an invalid launch shape is a Go error that
// names the kernel and the stage.
func TestLaunchErrorNamesKernel(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	buf, err := d.Alloc(ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(ctx, buf)
	err = d.Launch(ctx, "e2m1_nvidia", Dims{1, 1, 1}, Dims{4096, 1, 1}, 0, buf, buf, uint64(4))
	var ke *KernelError
	if !errors.As(err, &ke) || ke.Kernel != "e2m1_nvidia" || ke.Stage != "launch" {
		t.Fatalf("launch with 4096 threads per block: err = %v, want a launch KernelError naming e2m1_nvidia", err)
	}
	t.Log(err)
	err = d.Launch(ctx, "no_such_kernel", Dims{1, 1, 1}, Dims{1, 1, 1}, 0)
	if !errors.As(err, &ke) || ke.Kernel != "no_such_kernel" || ke.Stage != "lookup" {
		t.Fatalf("unknown kernel: err = %v", err)
	}
	// The device still works afterwards.
	if err := d.rangeInto(ctx, "e2m1_nvidia_range", 0x3F800000, make([]byte, 8)); err != nil {
		t.Fatalf("device unusable after a launch error: %v", err)
	}
}

// TestWatchdog: a kernel that runs past the Device's timeout is an error,
// not a hang. It uses its own Device, which the timeout leaves broken.
func TestWatchdog(t *testing.T) {
	if testing.Short() {
		t.Skip("spins the GPU for about a second")
	}
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	done, err := d.Alloc(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	d.Timeout = 100 * time.Millisecond
	t0 := time.Now()
	err = d.Launch(ctx, "util_spin", Dims{1, 1, 1}, Dims{32, 1, 1}, 0, uint64(3e9), done) // ~2 s at ~1.7 GHz
	el := time.Since(t0)
	if err == nil || !strings.Contains(err.Error(), "util_spin") || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("spin past the deadline: err = %v", err)
	}
	if el > 2*time.Second {
		t.Errorf("watchdog fired after %v, want about 100ms", el)
	}
	t.Logf("%v (after %v)", err, el)
	if err := d.Launch(ctx, "util_spin", Dims{1, 1, 1}, Dims{1, 1, 1}, 0, uint64(1), done); err == nil {
		t.Error("a broken device accepted another launch")
	}
}

// overrideFromEnv applies BITEXACT_CUDA_OVERRIDE ("module=file.ptx,..."):
// the benchmarks then time a variant of a kernel family (compiled with
// other tuning macros) through the same Go code, without a rebuild. A
// tuning aid only; tests and certification never read it.
func overrideFromEnv(tb testing.TB, d *Device) {
	spec := os.Getenv("BITEXACT_CUDA_OVERRIDE")
	if spec == "" {
		return
	}
	for _, kv := range strings.Split(spec, ",") {
		mod, file, ok := strings.Cut(kv, "=")
		if !ok {
			tb.Fatalf("BITEXACT_CUDA_OVERRIDE: %q is not module=file", kv)
		}
		ptx, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := d.Override(context.Background(), mod, ptx); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("module %s overridden by %s", mod, file)
	}
}
