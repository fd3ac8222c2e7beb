package exhaustive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm"
)

// native computes codes with the host build of the reference.
type native struct{}

func (native) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	c, err := unary.Lookup(conv)
	if err != nil {
		return err
	}
	c.EncodeRange(start, out)
	return nil
}

// zeros claims every code is 0.
type zeros struct{}

func (zeros) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	clear(out)
	return nil
}

// flip corrupts the code of one input.
type flip struct {
	native
	at uint32
}

func (f flip) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	if err := f.native.Unary(ctx, conv, start, out); err != nil {
		return err
	}
	if f.at >= start && f.at-start < uint32(len(out)) {
		out[f.at-start] ^= 1
	}
	return nil
}

// rootOf recomputes a Merkle root recursively, independently of the
// iterative merkleRoot.
func rootOf(leaves [][]byte) []byte {
	if len(leaves) == 1 {
		return leaves[0]
	}
	l, r := rootOf(leaves[:len(leaves)/2]), rootOf(leaves[len(leaves)/2:])
	h := sha256.Sum256(append(append([]byte{1}, l...), r...))
	return h[:]
}

func TestComputeTree(t *testing.T) {
	if testing.Short() {
		t.Skip("hashes 4 GiB")
	}
	d, err := Compute(context.Background(), zeros{}, "e2m1/nvidia", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf := sha256.Sum256(append([]byte{0}, make([]byte, Chunk)...))
	leaves := make([][]byte, Leaves)
	for i := range leaves {
		leaves[i] = leaf[:]
		if d.Leaves[i] != hex.EncodeToString(leaf[:]) {
			t.Fatalf("leaf %d = %s, want SHA-256(0x00 || 2^24 zero bytes) = %x", i, d.Leaves[i], leaf)
		}
	}
	if want := hex.EncodeToString(rootOf(leaves)); d.Root != want {
		t.Errorf("root = %s, want %s", d.Root, want)
	}
	if err := d.CheckRoot(); err != nil {
		t.Error(err)
	}
}

// Every conversion has a committed digest whose root matches its leaves.
func TestCommittedDigests(t *testing.T) {
	for _, c := range unary.All() {
		d, err := Committed(c.Name)
		if err != nil {
			t.Errorf("%v (compute it with: go run ./cmd/bitexact exhaustive --conv %s --engine native --write golden/exhaustive/digests)", err, c.Name)
			continue
		}
		if d.Width != c.Width() {
			t.Errorf("%s: width %d, want %d", c.Name, d.Width, c.Width())
		}
	}
}

// The native reference reproduces every committed digest over all 2^32
// inputs: the fast exhaustive check of every conversion, all in one pool
// of chunk jobs on all cores (about a minute of CPU in all), with progress
// in the log every ten seconds.
func TestExhaustiveNative(t *testing.T) {
	if testing.Short() {
		t.Skip("2^32 inputs per conversion")
	}
	var names []string
	for _, c := range unary.All() {
		names = append(names, c.Name)
	}
	got, err := computeAll(context.Background(), native{}, names, 0, logProgress(t, "native digests"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		want, err := Committed(n)
		if err != nil {
			t.Error(err)
			continue
		}
		if err := Compare(want, got[i]); err != nil {
			t.Error(err)
		}
	}
}

// logProgress logs progress at most every ten seconds, with the rate and
// the time left.
func logProgress(t *testing.T, what string) Progress {
	start := time.Now()
	last := start
	return func(done, total uint64) {
		now := time.Now()
		if now.Sub(last) < 10*time.Second {
			return
		}
		last = now
		el := now.Sub(start)
		left := time.Duration(float64(el) * float64(total-done) / float64(done))
		t.Logf("%s: %.1f%% of %d inputs, %.0f M/s, about %s left", what, 100*float64(done)/float64(total), total, float64(done)/el.Seconds()/1e6, left.Round(time.Second))
	}
}

func TestCompareAndLocalize(t *testing.T) {
	want, err := Committed("e2m1/nvidia")
	if err != nil {
		t.Skip(err)
	}
	got := *want
	got.Leaves = append([]string{}, want.Leaves...)
	got.Leaves[0x3f] = strings.Repeat("0", 64)
	got.Leaves[0xbf] = strings.Repeat("0", 64)
	err = Compare(want, &got)
	var m *Mismatch
	if !errors.As(err, &m) || len(m.Chunks) != 2 || m.Chunks[0] != 0x3f || m.Chunks[1] != 0xbf {
		t.Fatalf("Compare = %v, want chunks 0x3f and 0xbf", err)
	}
	if !strings.Contains(err.Error(), "first chunk 63 (inputs 0x3f000000..0x3fffffff)") {
		t.Errorf("message %q does not name the first chunk's inputs", err)
	}
	if err := got.CheckRoot(); err == nil {
		t.Error("CheckRoot accepted leaves that do not match the root")
	}

	// 0.75 = 0x3f400000 is an E2M1 tie: nvidia gives code 2 (1.0); the
	// corrupted engine gives 3.
	ctx := context.Background()
	d, err := Localize(ctx, native{}, flip{at: 0x3f400000}, "e2m1/nvidia", 0x3f)
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.Input != 0x3f400000 || d.Want != 2 || d.Got != 3 {
		t.Errorf("Localize = %+v, want input 0x3f400000, codes 2 vs 3", d)
	}
	if d, err := Localize(ctx, native{}, flip{at: 0x3f400000}, "e2m1/nvidia", 0x40); d != nil || err != nil {
		t.Errorf("Localize on an agreeing chunk = %+v, %v; want nil, nil", d, err)
	}
	if math.Float32frombits(d.Input) != 0.75 {
		t.Errorf("input %#x is not 0.75", d.Input)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Committed("e2m1/none"); err == nil || !strings.Contains(err.Error(), "no committed digest for e2m1/none") {
		t.Errorf("Committed(unknown) = %v", err)
	}
	if _, err := Compute(context.Background(), native{}, "e9m9/x", 0, nil); err == nil {
		t.Error("Compute of an unknown conversion succeeded")
	}
}

// The WebAssembly build reproduces committed leaves: a sample of chunks
// of every conversion (the one holding 0.75 and 1..2, the top of the
// -2^127 and below with -Inf and the negative NaNs).
// The whole 2^32 sweep through wasm takes minutes per conversion on two
// cores; `bitexact exhaustive --all` runs it. Natively every digest is
// checked in full (TestExhaustiveNative).
func TestExhaustiveWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("2^24 inputs per chunk through wasm")
	}
	ctx := context.Background()
	r, err := wasm.New(ctx, wasm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	chunks := []int{0x3f, 0xff}
	for _, c := range unary.All() {
		want, err := Committed(c.Name)
		if err != nil {
			t.Error(err)
			continue
		}
		got, err := ComputeLeaves(ctx, r, c.Name, chunks, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range chunks {
			if got[i] != want.Leaves[k] {
				d, err := Localize(ctx, native{}, r, c.Name, k)
				t.Errorf("%s: chunk %d differs from the committed leaf: %v %v", c.Name, k, d, err)
			}
		}
	}
}

// codeFunc computes the code of each input with f, width bytes each.
type codeFunc func(x uint32) uint16

func (f codeFunc) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	c, err := unary.Lookup(conv)
	if err != nil {
		return err
	}
	for i := 0; i < len(out)/c.Width(); i++ {
		v := f(start + uint32(i))
		out[i*c.Width()] = uint8(v)
		if c.Width() == 2 {
			out[i*2+1] = uint8(v >> 8)
		}
	}
	return nil
}

// A chunk of one repeated code takes its leaf from the table of such
// leaves: every leaf must still be SHA-256(0x00 || the chunk's codes),
// whether the chunk is one code throughout, changes code from one call
// to the next, or differs in one input only.
func TestRepeatedCodeLeaves(t *testing.T) {
	ctx := context.Background()
	last := uint32(Chunk - 1)
	for _, tc := range []struct {
		name string
		conv string
		f    codeFunc
	}{
		{"one code", "e2m1/nvidia", func(uint32) uint16 { return 7 }},
		{"one 16-bit code", "fp16/rne", func(uint32) uint16 { return 0x7c00 }},
		{"16-bit code with equal bytes", "fp16/rne", func(uint32) uint16 { return 0x0101 }},
		{"a second code from the second call", "e2m1/nvidia", func(x uint32) uint16 {
			if x%Chunk >= callInputs {
				return 2
			}
			return 1
		}},
		{"a second code in the last call", "e2m1/nvidia", func(x uint32) uint16 {
			if x%Chunk >= Chunk-callInputs {
				return 2
			}
			return 1
		}},
		{"one input differs, last", "e2m1/nvidia", func(x uint32) uint16 {
			if x%Chunk == last {
				return 3
			}
			return 0
		}},
		{"one input differs, first", "fp16/rne", func(x uint32) uint16 {
			if x%Chunk == 0 {
				return 0x8000
			}
			return 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := unary.Lookup(tc.conv)
			if err != nil {
				t.Fatal(err)
			}
			// Two chunks, so the second one of a repeated code reads the
			// table the first one filled.
			got, err := ComputeLeaves(ctx, tc.f, tc.conv, []int{3, 4}, 1)
			if err != nil {
				t.Fatal(err)
			}
			// Every f depends on the input's place in its chunk only:
			// both chunks hold the same codes.
			out := make([]byte, Chunk*c.Width())
			if err := tc.f.Unary(ctx, tc.conv, 3*Chunk, out); err != nil {
				t.Fatal(err)
			}
			want := sha256.Sum256(append([]byte{0}, out...))
			for k, chunk := range []uint32{3, 4} {
				if got[k] != hex.EncodeToString(want[:]) {
					t.Errorf("chunk %d: leaf %s, want %x", chunk, got[k], want)
				}
			}
		})
	}
}
