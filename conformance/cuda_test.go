//go:build cuda

package conformance

import (
	"context"
	"errors"
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

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/native/cuda"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
)

var certDir = flag.String("cert", os.Getenv("BITEXACT_CERT_DIR"), "write certificate.json and certificate.md to this directory (default $BITEXACT_CERT_DIR)")

var (
	dev    *cuda.Device
	engine cuda.Engine
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
	dev, engine = d, cuda.Engine{Dev: d}
	code := m.Run()
	if *certDir != "" {
		if err := writeCertificate(*certDir, certificate()); err != nil {
			fmt.Fprintln(os.Stderr, "conformance: writing certificate:", err)
			code = 1
		} else {
			fmt.Fprintln(os.Stderr, "conformance: certificate written to", *certDir)
		}
	}
	d.Close()
	os.Exit(code)
}

func certificate() Certificate {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, _ := dev.Info(ctx)
	c := Certificate{Tool: "bitexact conformance (native/cuda)", Date: now(), Device: info}
	for _, m := range cuda.Modules {
		h, _ := m.Header()
		c.PTX = append(c.PTX, ModuleProvenance{m.Name, m.Arch, h.SourceSHA256, h.Compiler, dev.Loaded(m.Name)})
	}
	c.Golden = GoldenProvenance{Suite: golden.SuiteVersion, Source: gold.src, Digests: "golden/exhaustive committed digests where present, else computed from refimpl on the host in the same run (per verdict)"}
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

// supported wraps the CUDA engine so that golden.Check runs only the cases
// a kernel claims; others are reported by the test as not covered.
type claimed struct{ cuda.Engine }

var errNoKernel = errors.New("no CUDA kernel claims this case")

func (c claimed) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	if !c.Supports(op, p) {
		return nil, errNoKernel
	}
	return c.Engine.Run(ctx, op, p, in)
}

// TestGolden runs every golden case that a CUDA kernel claims and compares
// every output bit for bit.
func TestGolden(t *testing.T) {
	s := goldenSet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	res, err := golden.Check(ctx, claimed{engine}, s, &golden.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	type agg struct {
		cases, elems int
		fails        []string
	}
	per := map[string]*agg{}
	var order []string
	covered := 0
	for _, r := range res {
		if errors.Is(r.Err, errNoKernel) {
			continue
		}
		covered++
		k, _ := cuda.KernelFor(r.Case.Op, r.Case.Params)
		a := per[k.Name]
		if a == nil {
			a = &agg{}
			per[k.Name] = a
			order = append(order, k.Name)
		}
		a.cases++
		a.elems += r.Elements
		if !r.OK() {
			msg := describe(s, r)
			a.fails = append(a.fails, msg)
			t.Errorf("%s", msg)
		}
	}
	t.Logf("golden %s (%s): %d of %d cases claimed by a CUDA kernel, %.2fs", s.Manifest.Suite, gold.src, covered, len(res), time.Since(t0).Seconds())
	for _, name := range order {
		a := per[name]
		k, _ := cuda.LookupKernel(name)
		v := Verdict{Kernel: name, Claim: claimOf(k), Check: "golden", Reference: "golden set " + s.Manifest.Suite,
			Result: "pass", Inputs: uint64(a.elems), Detail: fmt.Sprintf("%d cases", a.cases)}
		if len(a.fails) > 0 {
			v.Result, v.Detail = "fail", fmt.Sprintf("%d of %d cases differ; first: %s", len(a.fails), a.cases, a.fails[0])
		}
		t.Logf("  %-24s %-5s %d cases, %d elements", name, v.Result, a.cases, a.elems)
		record(v)
	}
	if covered == 0 {
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

func claimOf(k cuda.Kernel) string {
	if k.Conversion != "" {
		return k.Conversion
	}
	var p []string
	for key, v := range k.Params {
		p = append(p, key+"="+v)
	}
	return k.Op + " " + strings.Join(p, ",")
}

// describe prints a failing case with its first mismatch decoded: the
// input, the expected code and value, the code and value obtained.
func describe(s *golden.Set, r golden.Result) string {
	if r.Err != nil {
		return fmt.Sprintf("case %s (%s %v): %v", r.Case.Name, r.Case.Op, r.Case.Params, r.Err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "case %s (%s %v):", r.Case.Name, r.Case.Op, r.Case.Params)
	in, _ := s.Inputs(r.Case)
	for _, d := range r.Diffs {
		fmt.Fprintf(&b, " %s: %s (%d differ)", d.Tensor, d.Problem, d.Count)
		if d.First >= 0 && len(d.Want) == 1 && len(d.Got) == 1 {
			format := r.Case.Params["format"]
			if format == "" {
				format = "e2m1"
			}
			if x, ok := in["x"]; ok && x.DType == "F32" && d.First < x.Len() {
				fmt.Fprintf(&b, "; input %s", f32(x.F32()[d.First]))
			}
			fmt.Fprintf(&b, "; want 0x%02x (%s), got 0x%02x (%s)", d.Want[0], decode(format, d.Want[0]), d.Got[0], decode(format, d.Got[0]))
		}
	}
	return b.String()
}

func f32(x float32) string { return fmt.Sprintf("%g [0x%08x]", x, math.Float32bits(x)) }

func decode(format string, c byte) string {
	switch format {
	case "e2m1":
		return fmt.Sprintf("%g", fp4.Decode(c))
	case "e4m3":
		return fmt.Sprintf("%g", fp8.E4M3.Decode(c))
	case "e5m2":
		return fmt.Sprintf("%g", fp8.E5M2.Decode(c))
	}
	return "?"
}

// refUnary is the host reference for the exhaustive sweeps: the refimpl
// conversion itself (what golden.Native runs), without the op registry.
type refUnary struct{}

func (refUnary) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	c, err := unary.Lookup(conv)
	if err != nil {
		return err
	}
	c.EncodeRange(start, out)
	return ctx.Err()
}

// referenceDigest returns the committed digest of conv, or computes it from
// the reference on the host when none is committed, saying which.
func referenceDigest(t *testing.T, conv string) (*exhaustive.Digest, string) {
	if d, err := exhaustive.Committed(conv); err == nil {
		return d, "committed Merkle digest golden/exhaustive/digests/" + exhaustive.FileName(conv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	d, err := exhaustive.Compute(ctx, refUnary{}, conv, runtime.NumCPU(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: no committed digest; reference digest computed on the host from refimpl in %.1fs", conv, time.Since(t0).Seconds())
	return d, "Merkle digest of refimpl computed on the host in this run (no committed digest)"
}

// TestExhaustive sweeps every unary kernel over all 2^32 float32 inputs and
// compares the Merkle digest of its outputs with the reference's.
func TestExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive 2^32 sweeps skipped under -short")
	}
	for _, k := range cuda.Kernels {
		if k.Conversion == "" {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			want, ref := referenceDigest(t, k.Conversion)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			t0 := time.Now()
			got, err := exhaustive.Compute(ctx, engine, k.Conversion, runtime.NumCPU(), nil)
			secs := time.Since(t0).Seconds()
			v := Verdict{Kernel: k.Name, Claim: k.Conversion, Check: "exhaustive", Reference: ref, Inputs: 1 << 32, Seconds: secs}
			if err != nil {
				v.Result, v.Detail = "fail", err.Error()
				record(v)
				t.Fatal(err)
			}
			if err := exhaustive.Compare(want, got); err != nil {
				v.Result, v.Detail = "fail", err.Error()
				var mm *exhaustive.Mismatch
				if errors.As(err, &mm) {
					if diff, lerr := exhaustive.Localize(ctx, refUnary{}, engine, k.Conversion, mm.Chunks[0]); lerr == nil && diff != nil {
						v.Detail += "; " + diff.Error()
					}
				}
				record(v)
				t.Fatalf("%s: %s", k.Name, v.Detail)
			}
			v.Result, v.Detail = "pass", "root "+got.Root[:16]+"…"
			record(v)
			t.Logf("%s = %s over 2^32 inputs in %.2fs (end to end: sweep, copy back, SHA-256 Merkle tree)", k.Name, k.Conversion, secs)
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
	const kernel, conv = "e2m1_sw_sm121", "e2m1/nvidia"
	want, ref := referenceDigest(t, conv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	u := cuda.KernelUnary{Dev: dev, Kernel: kernel}
	got, err := exhaustive.Compute(ctx, u, conv, runtime.NumCPU(), nil)
	if err != nil {
		t.Fatal(err)
	}
	v := Verdict{Kernel: kernel, Claim: "held against " + conv + " (not its profile)", Check: "third-party", Reference: ref, Inputs: 1 << 32}
	err = exhaustive.Compare(want, got)
	var mm *exhaustive.Mismatch
	// Negative NaNs all lie in the last chunk (inputs 0xFF000000..).
	if !errors.As(err, &mm) || len(mm.Chunks) != 1 || mm.Chunks[0] != exhaustive.Leaves-1 {
		v.Result, v.Detail = "fail", fmt.Sprintf("want a difference in the last chunk only, got %v", err)
		record(v)
		t.Fatal(v.Detail)
	}
	// Localise every difference in that chunk.
	c, _ := unary.Lookup(conv)
	lo := uint32(exhaustive.Leaves-1) << exhaustive.ChunkLog2
	const step = 1 << 20
	a, b := make([]byte, step), make([]byte, step)
	var diffs, bad uint64
	var firstBad string
	for off := uint32(0); off < exhaustive.Chunk; off += step {
		start := lo + off
		c.EncodeRange(start, a)
		if err := u.Unary(ctx, conv, start, b); err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if a[i] == b[i] {
				continue
			}
			diffs++
			in := start + uint32(i)
			if !(in >= 0xFF800001 && a[i] == 0x7 && b[i] == 0xF) && firstBad == "" {
				bad++
				firstBad = fmt.Sprintf("input 0x%08x: nvidia 0x%x, kernel 0x%x", in, a[i], b[i])
			}
		}
	}
	const negNaNs = 0xFFFFFFFF - 0xFF800001 + 1
	v.Seconds = time.Since(t0).Seconds()
	if bad > 0 || diffs != negNaNs {
		v.Result, v.Detail = "fail", fmt.Sprintf("%d differences (want exactly the %d negative NaNs); %s", diffs, uint64(negNaNs), firstBad)
		record(v)
		t.Fatal(v.Detail)
	}
	v.Result = "expected-difference"
	v.Detail = fmt.Sprintf("differs from nvidia on exactly the %d negative NaNs (0xFF800001..0xFFFFFFFF: 0xF, nvidia 0x7), equal on all other inputs", diffs)
	record(v)
	t.Logf("%s vs %s: %s (%.2fs)", kernel, conv, v.Detail, v.Seconds)
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
		k, ok := cuda.KernelFor("fp8.decode", p)
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
		v := Verdict{Kernel: k.Name, Claim: claimOf(k), Check: "table", Reference: "refimpl fp8 " + f.Name + " Decode, all 256 codes",
			Inputs: 256, Result: "pass", Detail: "all 256 codes bit-exact"}
		if len(bad) > 0 {
			v.Result, v.Detail = "fail", fmt.Sprintf("%d codes differ; first: %s", len(bad), bad[0])
			t.Errorf("%s: %s", k.Name, strings.Join(bad, "\n"))
		}
		record(v)
		t.Logf("%s: %s", k.Name, v.Detail)
	}
}

func tensorU8(v []uint8) tensor.Tensor { return tensor.FromU8([]int{len(v)}, v) }
