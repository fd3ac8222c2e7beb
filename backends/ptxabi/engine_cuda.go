//go:build cuda

package ptxabi

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/bitexact/bitexact/backends/cuda"
	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Options configure Certify.
type Options struct {
	Dev    *cuda.Device
	PTX    []byte
	Kernel string
	ABI    string
	// Claim is the profile the kernel claims ("" for the ABI's default).
	Claim         string
	Set           *golden.Set
	GoldenSHA256  string
	ReferenceWasm string
	// SampleChunks, when in 1..255, sweeps only that many of the 256
	// chunks of 2^24 inputs (evenly spaced): a sampled run, marked not
	// valid for certification. 0 sweeps all 2^32 inputs.
	SampleChunks  int
	MaxMismatches int
	// Log, if set, receives progress lines.
	Log io.Writer
}

// Certify loads the PTX, runs the kernel on every task of its ABI's
// suite (and, for unary ABIs, on all 2^32 float32 inputs) and builds the
// certificate.
func Certify(ctx context.Context, o Options) (*certificate.Certificate, error) {
	a, err := Lookup(o.ABI)
	if err != nil {
		return nil, err
	}
	s, err := suite.Resolve(o.Set, a.Suite)
	if err != nil {
		return nil, err
	}
	claim := o.Claim
	if claim == "" {
		claim = a.DefaultClaim
	}
	if !s.HasProfile(claim) {
		return nil, fmt.Errorf("profile %q is not a profile of suite %s (profiles: %v)", claim, s.Name, s.Profiles)
	}
	for _, t := range s.Tasks {
		// Checked before the sweep: the tasks are held to golden outputs.
		if _, ok := t.Cases[claim]; !ok {
			return nil, fmt.Errorf("task %s has no golden case for profile %s", t.Name, claim)
		}
	}
	if o.SampleChunks < 0 || o.SampleChunks > exhaustive.Leaves {
		return nil, fmt.Errorf("sample %d: want 0 (all) to %d chunks", o.SampleChunks, exhaustive.Leaves)
	}
	mod, err := o.Dev.LoadPTX(ctx, o.PTX)
	if err != nil {
		return nil, err
	}
	defer mod.Unload(context.Background())
	if err := mod.Has(ctx, o.Kernel); err != nil {
		return nil, err
	}
	k := kernel{dev: o.Dev, mod: mod, name: o.Kernel, abi: a}
	cin := certificate.Input{GoldenSHA256: o.GoldenSHA256, ReferenceWasm: o.ReferenceWasm,
		Backend: "cuda-ptx", Implementation: fmt.Sprintf("PTX kernel %s (ABI %s, sha256 %s)", o.Kernel, a.Name, mod.SHA256),
		MaxMismatches: o.MaxMismatches, Extra: map[string]string{"ptx_sha256": mod.SHA256, "kernel": o.Kernel, "abi": a.Name}}
	if info, err := o.Dev.Info(ctx); err == nil {
		cin.Platform = fmt.Sprintf("%s (sm %s, %d SMs), CUDA driver API %d, %s", info.Name, info.CC, info.SMs, info.DriverAPI, info.Driver)
	}
	if a.Format != "" {
		ex, err := k.sweep(ctx, o.SampleChunks, o.Log)
		if err != nil {
			return nil, err
		}
		cin.Exhaustive = ex
		if o.SampleChunks > 0 && o.SampleChunks < exhaustive.Leaves {
			cin.Reduced = fmt.Sprintf("sampled run: %d of %d chunks of the exhaustive sweep (--sample)", o.SampleChunks, exhaustive.Leaves)
		}
	}
	// The kernel runs on every task of the suite through gate,
	// the code that certifies bitexact's own kernels and bitexacttest's.
	return gate.Suite(ctx, gate.SuiteOptions{Set: o.Set, Suite: s, Profile: claim, Certificate: cin},
		func(ctx context.Context, t gate.Task) (ops.Tensors, error) {
			out, err := k.run(ctx, t.Params, t.Inputs, t.Expected)
			if err != nil {
				return nil, fmt.Errorf("task %s: %w", t.Name, err)
			}
			logf(o.Log, "task %s: ran %s", t.Name, o.Kernel)
			return out, nil
		})
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, "certify cuda: "+format+"\n", a...)
	}
}

type kernel struct {
	dev  *cuda.Device
	mod  *cuda.ThirdParty
	name string
	abi  ABI
}

var blockDims = cuda.Dims{X: 256, Y: 1, Z: 1}

func (k kernel) launch(ctx context.Context, work int64, args ...any) error {
	return k.mod.Launch(ctx, k.name, cuda.Grid1D(work, 256, 65535), blockDims, 0, args...)
}

// run runs the kernel on one task's inputs; want is the claimed profile's
// golden output (its per-tensor value feeds the NVFP4 ABI).
func (k kernel) run(ctx context.Context, p ops.Params, in ops.Tensors, want ops.Tensors) (ops.Tensors, error) {
	b := k.dev.Buffers(ctx)
	defer b.Free()
	switch k.abi.Name {
	case "unary-e2m1", "unary-e4m3", "unary-e5m2", "unary-e8m0":
		x, ok := in["x"]
		if !ok {
			return nil, fmt.Errorf("input tensor %q missing", "x")
		}
		codes, err := k.unary(ctx, b, x.Data)
		if err != nil {
			return nil, err
		}
		t := tensor.FromU8(x.Shape, codes)
		t.Logical = k.abi.Format
		return ops.Tensors{"codes": t}, nil
	case "nvfp4-quantize":
		if p.Get("swizzle", "0") != "0" {
			return nil, fmt.Errorf("ABI %s writes linear scales: claim a swizzle=0 profile", k.abi.Name)
		}
		x := in["x"]
		if err := x.Expect("x", tensor.F32, -1, -1); err != nil {
			return nil, err
		}
		g, ok := want["global"]
		if !ok || g.DType != tensor.F32 || g.Len() != 1 {
			return nil, fmt.Errorf("golden output has no float32 global")
		}
		rows, cols := x.Shape[0], x.Shape[1]
		bx, err := b.Upload(x.Data)
		if err != nil {
			return nil, err
		}
		bp, err := b.Zeros(int64(rows * cols / 2))
		if err != nil {
			return nil, err
		}
		bs, err := b.Zeros(int64(rows * cols / 16))
		if err != nil {
			return nil, err
		}
		if err := k.launch(ctx, int64(rows*cols/16), bx, bp, bs, g.F32()[0], int32(rows), int32(cols)); err != nil {
			return nil, err
		}
		packed, err := b.Download(bp, rows*cols/2)
		if err != nil {
			return nil, err
		}
		scales, err := b.Download(bs, rows*cols/16)
		if err != nil {
			return nil, err
		}
		pt := tensor.FromU8([]int{rows, cols / 2}, packed)
		pt.Logical = "e2m1x2"
		st := tensor.FromU8([]int{rows, cols / 16}, scales)
		st.Logical = "e4m3"
		return ops.Tensors{"packed": pt, "scales": st, "global": g}, nil
	case "awq-pack":
		if l := p.Get("layout", "awq"); l != "awq" {
			return nil, fmt.Errorf("ABI %s has the awq layout's shapes: claim layout awq, not %s", k.abi.Name, l)
		}
		q, z := in["q"], in["zeros"]
		if err := q.Expect("q", tensor.U8, -1, -1); err != nil {
			return nil, err
		}
		if err := z.Expect("zeros", tensor.U8, -1, q.Shape[1]); err != nil {
			return nil, err
		}
		ic, oc, groups := q.Shape[0], q.Shape[1], z.Shape[0]
		bq, err := b.Upload(q.Data)
		if err != nil {
			return nil, err
		}
		bz, err := b.Upload(z.Data)
		if err != nil {
			return nil, err
		}
		bw, err := b.Zeros(int64(4 * ic * oc / 8))
		if err != nil {
			return nil, err
		}
		bqz, err := b.Zeros(int64(4 * groups * oc / 8))
		if err != nil {
			return nil, err
		}
		if err := k.launch(ctx, int64(ic*oc/8), bq, bz, bw, bqz, int32(ic), int32(oc), int32(ic/groups)); err != nil {
			return nil, err
		}
		w, err := b.Download(bw, 4*ic*oc/8)
		if err != nil {
			return nil, err
		}
		zw, err := b.Download(bqz, 4*groups*oc/8)
		if err != nil {
			return nil, err
		}
		return ops.Tensors{
			"qweight": {DType: tensor.I32, Shape: []int{ic, oc / 8}, Data: w},
			"qzeros":  {DType: tensor.I32, Shape: []int{groups, oc / 8}, Data: zw},
		}, nil
	case "sparse24-compress":
		if l := p.Get("layout", "rowmajor"); l != "rowmajor" {
			return nil, fmt.Errorf("ABI %s is row-major: claim layout rowmajor, not %s", k.abi.Name, l)
		}
		c := in["codes"]
		if err := c.Expect("codes", tensor.U8, -1, -1); err != nil {
			return nil, err
		}
		n, kk := c.Shape[0], c.Shape[1]
		bc, err := b.Upload(c.Data)
		if err != nil {
			return nil, err
		}
		bcomp, err := b.Zeros(int64(n * kk / 4))
		if err != nil {
			return nil, err
		}
		bmeta, err := b.Zeros(int64(n * kk / 8))
		if err != nil {
			return nil, err
		}
		if err := k.launch(ctx, int64(n*kk/8), bc, bcomp, bmeta, int32(n), int32(kk)); err != nil {
			return nil, err
		}
		comp, err := b.Download(bcomp, n*kk/4)
		if err != nil {
			return nil, err
		}
		meta, err := b.Download(bmeta, n*kk/8)
		if err != nil {
			return nil, err
		}
		ct := tensor.FromU8([]int{n, kk / 4}, comp)
		ct.Logical = "e2m1x2"
		return ops.Tensors{"comp": ct, "meta": tensor.FromU8([]int{n, kk / 8}, meta)}, nil
	}
	return nil, fmt.Errorf("ABI %s has no runner", k.abi.Name)
}

// unary runs a unary kernel on float32 bytes xb and returns one code per
// input (unpacking E2M1 pairs).
func (k kernel) unary(ctx context.Context, b *cuda.Buffers, xb []byte) ([]byte, error) {
	n := len(xb) / 4
	if k.abi.Packed && n%2 != 0 {
		return nil, fmt.Errorf("ABI %s needs an even number of inputs, got %d", k.abi.Name, n)
	}
	outLen, work := n, int64(n)
	if k.abi.Packed {
		outLen, work = n/2, int64(n/2)
	}
	bx, err := b.Upload(xb)
	if err != nil {
		return nil, err
	}
	bo, err := b.Zeros(int64(outLen))
	if err != nil {
		return nil, err
	}
	if err := k.launch(ctx, work, bx, bo, uint64(n)); err != nil {
		return nil, err
	}
	raw, err := b.Download(bo, outLen)
	if err != nil {
		return nil, err
	}
	if !k.abi.Packed {
		return raw, nil
	}
	codes := make([]byte, n)
	for i, v := range raw {
		codes[2*i], codes[2*i+1] = v&15, v>>4
	}
	return codes, nil
}

// sweepCall is the most inputs per kernel launch of the sweep.
const sweepCall = 1 << 22

// sweeper runs the kernel over consecutive float32 bit patterns (an
// exhaustive.Unary, whatever conversion it is asked for): the inputs are
// generated on the host and launched one call at a time through reused
// buffers, while gate.Profiles hashes the codes on every core.
type sweeper struct {
	k         kernel
	mu        sync.Mutex
	bx, bo    cuda.Buffer
	host, raw []byte
	log       io.Writer
	done      uint64
	t0        time.Time
}

func (k kernel) newSweeper(ctx context.Context, log io.Writer) (*sweeper, error) {
	s := &sweeper{k: k, host: make([]byte, 4*sweepCall), raw: make([]byte, sweepCall), log: log, t0: time.Now()}
	var err error
	if s.bx, err = k.dev.Alloc(ctx, 4*sweepCall); err != nil {
		return nil, err
	}
	if s.bo, err = k.dev.Alloc(ctx, sweepCall); err != nil {
		k.dev.Free(ctx, s.bx)
		return nil, err
	}
	return s, nil
}

func (s *sweeper) close() {
	s.k.dev.Free(context.Background(), s.bx)
	s.k.dev.Free(context.Background(), s.bo)
}

// Unary writes the codes of inputs start .. start+len(out)-1 into out.
func (s *sweeper) Unary(ctx context.Context, _ string, start uint32, out []byte) error {
	n := len(out)
	if n > sweepCall || s.k.abi.Packed && n%2 != 0 {
		return fmt.Errorf("sweep call of %d inputs: want at most %d (an even number for a packed ABI)", n, sweepCall)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(s.host[4*i:], start+uint32(i))
	}
	if err := s.k.dev.CopyIn(ctx, s.bx, s.host[:4*n]); err != nil {
		return err
	}
	outLen := n
	if s.k.abi.Packed {
		outLen = n / 2
	}
	if err := s.k.launch(ctx, int64(outLen), s.bx, s.bo, uint64(n)); err != nil {
		return err
	}
	if !s.k.abi.Packed {
		if err := s.k.dev.Download(ctx, out, s.bo); err != nil {
			return err
		}
	} else {
		if err := s.k.dev.Download(ctx, s.raw[:outLen], s.bo); err != nil {
			return err
		}
		for i, v := range s.raw[:outLen] {
			out[2*i], out[2*i+1] = v&15, v>>4
		}
	}
	const every = 1 << 29
	if s.done/every != (s.done+uint64(n))/every {
		logf(s.log, "exhaustive: %d Mi inputs swept (%s)", (s.done+uint64(n))>>20, time.Since(s.t0).Round(time.Second))
	}
	s.done += uint64(n)
	return nil
}

// sweep compares the kernel's codes, chunk by chunk, with the committed
// digest of every profile of the format (gate.Profiles).
func (k kernel) sweep(ctx context.Context, sample int, log io.Writer) ([]certificate.Exhaustive, error) {
	sw, err := k.newSweeper(ctx, log)
	if err != nil {
		return nil, err
	}
	defer sw.close()
	return gate.Profiles(ctx, sw, k.abi.Format, sample, runtime.NumCPU())
}
