//go:build cuda

package conformance

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/bitexact/bitexact/backends/cuda"
	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

var certDir = flag.String("cert", os.Getenv("BITEXACT_CERT_DIR"), "write the gate record (gate.json, gate.md) to this directory (default $BITEXACT_CERT_DIR)")

var (
	dev    *cuda.Device
	engine gate.Engine
	// record gathers every verdict of the run (certificate.Gate.Add is
	// safe for concurrent use).
	record = &certificate.Gate{}
	gold   struct {
		once sync.Once
		set  *golden.Set
		src  string
		err  error
	}
)

func TestMain(m *testing.M) {
	flag.Parse()
	d, err := cuda.Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance: no usable CUDA device:", err)
		os.Exit(1)
	}
	dev, engine = d, cuda.NewEngine(d)
	code := m.Run()
	if *certDir != "" {
		if err := finishRecord().WriteDir(*certDir); err != nil {
			fmt.Fprintln(os.Stderr, "conformance: writing certificate:", err)
			code = 1
		} else {
			fmt.Fprintln(os.Stderr, "conformance: certificate written to", *certDir)
		}
	}
	d.Close()
	os.Exit(code)
}

// finishRecord fills the run's record with the GPU, the PTX that ran and
// the golden set.
func finishRecord() *certificate.Gate {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, _ := dev.Info(ctx)
	c := record
	c.Tool, c.Date, c.Backend = "bitexact conformance (backends/cuda)", time.Now().UTC().Format(time.RFC3339), "cuda"
	c.Device = fmt.Sprintf("%s (sm %s, %d SMs, %.1f GiB)", info.Name, info.CC, info.SMs, float64(info.MemBytes)/(1<<30))
	c.Verifies = "the embedded PTX, as this GPU's driver compiled it, gave the reference's bits on the inputs of each check"
	c.Details = map[string]string{"driver": info.Driver, "driver CUDA version": fmt.Sprintf("%d.%d", info.DriverAPI/1000, info.DriverAPI%1000/10)}
	c.Sources = nil
	for _, m := range cuda.Modules {
		h, _ := m.Header()
		loaded := dev.Loaded(m.Name)
		c.Sources = append(c.Sources, certificate.Source{Module: m.Name, Arch: m.Arch, SourceSHA256: h.SourceSHA256, Compiler: h.Compiler, Loaded: &loaded})
	}
	c.Golden = certificate.GateGolden{Suite: golden.SuiteVersion, Source: gold.src,
		Digests: "golden/exhaustive committed digests where present, else computed from refimpl on the host in the same run (per verdict)"}
	if gold.set != nil {
		c.Golden.Generator = gold.set.Manifest.Generator
	}
	return c
}

// goldenSet returns the embedded golden set, or, while none is committed,
// the current catalog built in memory through the native reference (and
// says which in the certificate).
func goldenSet(t *testing.T) *golden.Set {
	gold.once.Do(func() {
		if s, err := golden.Default(); err == nil && len(s.Manifest.Cases) > 0 {
			gold.set, gold.src = s, "embedded golden/data"
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		f, err := golden.Build(ctx, golden.Native{}, nil)
		if err != nil {
			gold.err = fmt.Errorf("building the golden set in memory: %w", err)
			return
		}
		fsys := fstest.MapFS{}
		for p, b := range f.Data {
			fsys[p] = &fstest.MapFile{Data: b}
		}
		gold.set, gold.err = golden.Load(fsys)
		gold.src = "built in memory from refimpl (native engine): no committed golden set"
	})
	if gold.err != nil {
		t.Fatal(gold.err)
	}
	return gold.set
}

// TestGolden runs every golden case that a CUDA kernel claims and compares
// every output bit for bit (gate.Golden).
func TestGolden(t *testing.T) {
	s := goldenSet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	run, err := gate.Golden(ctx, engine, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Failures {
		t.Error(f)
	}
	t.Logf("golden %s (%s): %d of %d cases claimed by a CUDA kernel, %.2fs", s.Manifest.Suite, gold.src, run.Claimed, run.Cases, time.Since(t0).Seconds())
	for _, v := range run.Verdicts {
		t.Logf("  %-24s %-5s %s, %d elements", v.Kernel, v.Result, v.Detail, v.Inputs)
	}
	record.Add(run.Verdicts...)
	if run.Claimed == 0 {
		t.Errorf("no golden case is claimed by a CUDA kernel (ops in the set: %v)", opsIn(s))
	}
}

func opsIn(s *golden.Set) []string {
	seen := map[string]bool{}
	var o []string
	for _, c := range s.Manifest.Cases {
		if !seen[c.Op] {
			seen[c.Op] = true
			o = append(o, c.Op)
		}
	}
	return o
}

// TestExhaustive sweeps every unary kernel over all 2^32 float32 inputs and
// compares the Merkle digest of its outputs with the reference's
// (gate.Exhaustive).
func TestExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive 2^32 sweeps skipped under -short")
	}
	for _, k := range cuda.Kernels {
		if k.Conversion == "" {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			v, err := gate.Exhaustive(ctx, engine, k, runtime.NumCPU())
			if err != nil {
				t.Fatal(err)
			}
			record.Add(v)
			if v.Result != certificate.Pass {
				t.Fatalf("%s: %s", k.Name, v.Detail)
			}
			t.Logf("%s = %s over 2^32 inputs in %.2fs (end to end: sweep, copy back, SHA-256 Merkle tree; %s)", k.Name, k.Conversion, v.Seconds, v.Reference)
		})
	}
}

// TestThirdPartyE2M1 holds the dgx-vllm software E2M1 (which claims the
// instruction's behaviour) against the nvidia profile over all 2^32
// inputs: it must differ exactly on the negative NaNs (bit patterns
// 0xFF800001..0xFFFFFFFF), giving 0xF where the instruction gives 0x7, and
// agree everywhere else.
func TestThirdPartyE2M1(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive 2^32 sweeps skipped under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	k, err := engine.Lookup("e2m1_sw_sm121")
	if err != nil {
		t.Fatal(err)
	}
	v, err := gate.HeldAgainst(ctx, engine, k, "e2m1/nvidia", gate.Documented{
		Where: "the negative NaNs (0xFF800001..0xFFFFFFFF: 0xF, nvidia 0x7)",
		Count: 0xFFFFFFFF - 0xFF800001 + 1,
		Expected: func(in, want, got uint32) bool {
			return in >= 0xFF800001 && want == 0x7 && got == 0xF
		},
	}, runtime.NumCPU())
	if err != nil {
		t.Fatal(err)
	}
	record.Add(v)
	if v.Result != certificate.ExpectedDifference {
		t.Fatalf("%s: %s", k.Name, v.Detail)
	}
	t.Logf("%s vs e2m1/nvidia: %s (%.2fs)", k.Name, v.Detail, v.Seconds)
}

// TestFP8Decode decodes all 256 codes of each format on the GPU and
// compares every one with refimpl fp8 Decode bit for bit (NaN codes
// included: the contract is the quiet NaN 0x7fc00000 with the code's sign).
func TestFP8Decode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, f := range []fp8.Format{fp8.E4M3, fp8.E5M2} {
		codes := make([]uint8, 256)
		for i := range codes {
			codes[i] = uint8(i)
		}
		p := ops.Params{"format": f.Name}
		k, ok := engine.KernelFor("fp8.decode", p)
		if !ok {
			t.Fatalf("no decode kernel for %s", f.Name)
		}
		out, err := engine.Run(ctx, "fp8.decode", p, ops.Tensors{"codes": tensorU8(codes)})
		if err != nil {
			t.Fatal(err)
		}
		got := out["x"].F32()
		var bad []string
		for c := 0; c < 256; c++ {
			w, g := f.Decode(uint8(c)), got[c]
			if math.Float32bits(w) != math.Float32bits(g) {
				bad = append(bad, fmt.Sprintf("code 0x%02x: want %s, got %s", c, f32(w), f32(g)))
			}
		}
		v := certificate.Verdict{Kernel: k.Name, Claim: k.Claim(), Check: "table", Reference: "refimpl fp8 " + f.Name + " Decode, all 256 codes",
			Inputs: 256, Result: certificate.Pass, Detail: "all 256 codes bit-exact"}
		if len(bad) > 0 {
			v.Result, v.Detail = certificate.Fail, fmt.Sprintf("%d codes differ; first: %s", len(bad), bad[0])
			t.Errorf("%s: %s", k.Name, strings.Join(bad, "\n"))
		}
		record.Add(v)
		t.Logf("%s: %s", k.Name, v.Detail)
	}
}

func f32(x float32) string { return fmt.Sprintf("%g [0x%08x]", x, math.Float32bits(x)) }

func tensorU8(v []uint8) tensor.Tensor { return tensor.FromU8([]int{len(v)}, v) }
