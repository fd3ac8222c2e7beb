// Package exhaustive holds and recomputes the Merkle digests of every unary
// conversion over all 2^32 float32 inputs.
//
// The outputs of a conversion for the inputs with bit patterns 0 ..
// 2^32-1, in that order, Width() bytes per code (E2M1 codes one per byte,
// 16-bit codes little-endian), are cut into 256 chunks of 2^24 inputs. Leaf
// i is SHA-256(0x00 || outputs of chunk i); an inner node is
// SHA-256(0x01 || left || right) (the domain separation of RFC 6962, so a
// leaf can never be read as a node); the root is the node over all 256
// leaves. Committing the leaves, not just the root, lets a mismatch be
// localised to its chunk from the digests alone, and then to the first
// differing input by recomputing only that chunk.
package exhaustive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bitexact/bitexact/refimpl/unary"
)

// Shape of the tree.
const (
	ChunkLog2 = 24
	Chunk     = 1 << ChunkLog2 // inputs per leaf
	Leaves    = 1 << (32 - ChunkLog2)
	// callInputs is how many inputs go to one Unary call; it bounds the
	// buffers an engine copies at once (a wasm guest's memory included).
	callInputs = 1 << 20
)

// Unary computes codes of consecutive float32 inputs; golden.Engine
// satisfies it (natively or through wasm).
type Unary interface {
	Unary(ctx context.Context, conv string, start uint32, out []byte) error
}

// Digest is the committed Merkle tree of one conversion.
type Digest struct {
	Conversion string `json:"conversion"`
	// Width is the bytes per code in the hashed stream.
	Width     int      `json:"width"`
	ChunkLog2 int      `json:"chunk_log2"`
	Root      string   `json:"root"`
	Leaves    []string `json:"leaves"`
}

// Progress reports inputs done so far out of 2^32 (or out of the chunk
// when localising).
type Progress func(done, total uint64)

// Compute hashes conv's outputs over all 2^32 inputs through u, running
// workers chunks at once (0: GOMAXPROCS).
func Compute(ctx context.Context, u Unary, conv string, workers int, progress Progress) (*Digest, error) {
	ds, err := computeAll(ctx, u, []string{conv}, workers, progress)
	if err != nil {
		return nil, err
	}
	return ds[0], nil
}

// computeAll hashes the outputs of every conversion in convs over all
// 2^32 inputs through u in one pool of workers chunk jobs (0:
// GOMAXPROCS), so that no core idles at the end of one conversion while
// another waits. progress counts inputs over all the conversions.
func computeAll(ctx context.Context, u Unary, convs []string, workers int, progress Progress) ([]*Digest, error) {
	var jobs []job
	cs := make([]unary.Conversion, len(convs))
	for k, conv := range convs {
		c, err := unary.Lookup(conv)
		if err != nil {
			return nil, err
		}
		cs[k] = c
		for i := range Leaves {
			jobs = append(jobs, job{c, i})
		}
	}
	leaves, err := hashChunks(ctx, u, jobs, workers, progress)
	if err != nil {
		return nil, err
	}
	ds := make([]*Digest, len(convs))
	for k, c := range cs {
		l := leaves[k*Leaves : (k+1)*Leaves]
		d := &Digest{Conversion: c.Name, Width: c.Width(), ChunkLog2: ChunkLog2, Leaves: make([]string, Leaves)}
		for i := range l {
			d.Leaves[i] = hex.EncodeToString(l[i][:])
		}
		root := merkleRoot(l)
		d.Root = hex.EncodeToString(root[:])
		ds[k] = d
	}
	return ds, nil
}

// job is one chunk of one conversion.
type job struct {
	c     unary.Conversion
	chunk int
}

// ComputeLeaves hashes only the given chunks and returns their leaves (hex),
// in the order given. Checking a few leaves against a committed digest is
// a sampled check: it says nothing about the other chunks.
func ComputeLeaves(ctx context.Context, u Unary, conv string, chunks []int, workers int) ([]string, error) {
	c, err := unary.Lookup(conv)
	if err != nil {
		return nil, err
	}
	for _, i := range chunks {
		if i < 0 || i >= Leaves {
			return nil, fmt.Errorf("chunk %d out of range [0, %d)", i, Leaves)
		}
	}
	jobs := make([]job, len(chunks))
	for k, i := range chunks {
		jobs[k] = job{c, i}
	}
	leaves, err := hashChunks(ctx, u, jobs, workers, nil)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(chunks))
	for i := range leaves {
		out[i] = hex.EncodeToString(leaves[i][:])
	}
	return out, nil
}

// hashChunks computes the leaf of every job, workers jobs at once.
//
// Most chunks of a narrow format hold one code repeated (every input of
// the chunk rounds to the same zero, maximum, infinity or NaN code): a
// chunk whose outputs are all one code takes its leaf from a table of
// such leaves, filled on first use, instead of hashing 2^24 codes again.
// The leaf is the same bytes either way, SHA-256(0x00 || outputs); only
// the outputs are always computed, so every input is still checked.
func hashChunks(ctx context.Context, u Unary, jobs []job, workers int, progress Progress) ([][32]byte, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := uint64(len(jobs)) * Chunk
	leaves := make([][32]byte, len(jobs))
	var next atomic.Int64
	var done atomic.Uint64
	var mu sync.Mutex
	var wg sync.WaitGroup
	var uniform sync.Map // string(code) -> [32]byte leaf of a chunk of that code
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				k := int(next.Add(1) - 1)
				if k >= len(jobs) {
					return
				}
				c, i := jobs[k].c, jobs[k].chunk
				width := c.Width()
				if n := callInputs * width; len(buf) != n {
					buf = make([]byte, n)
				}
				h := sha256.New()
				h.Write([]byte{0})
				// code is the one code of every call so far while none has
				// been hashed; pending counts those calls.
				var code []byte
				pending, hashed := 0, false
				for off := 0; off < Chunk; off += callInputs {
					start := uint32(i*Chunk + off)
					if err := u.Unary(ctx, c.Name, start, buf); err != nil {
						errs[w] = fmt.Errorf("%s: inputs 0x%08x..: %w", c.Name, start, err)
						next.Store(int64(len(jobs)))
						return
					}
					switch {
					case !hashed && oneCode(buf, width) && (pending == 0 || bytes.Equal(buf[:width], code)):
						if pending == 0 {
							code = bytes.Clone(buf[:width])
						}
						pending++
					default:
						if pending > 0 {
							writeRepeated(h, code, pending*callInputs)
							pending = 0
						}
						hashed = true
						h.Write(buf)
					}
					d := done.Add(callInputs)
					if progress != nil {
						mu.Lock()
						progress(d, total)
						mu.Unlock()
					}
				}
				if hashed {
					h.Sum(leaves[k][:0])
					continue
				}
				if l, ok := uniform.Load(string(code)); ok {
					leaves[k] = l.([32]byte)
					continue
				}
				writeRepeated(h, code, Chunk)
				h.Sum(leaves[k][:0])
				uniform.Store(string(code), leaves[k])
			}
		}()
	}
	wg.Wait()
	return leaves, errors.Join(errs...)
}

// oneCode reports whether b is one code of width bytes repeated.
func oneCode(b []byte, width int) bool {
	return bytes.Equal(b[width:], b[:len(b)-width])
}

// writeRepeated writes code n times to w.
func writeRepeated(w io.Writer, code []byte, n int) {
	fill := bytes.Repeat(code, callInputs)
	for ; n >= callInputs; n -= callInputs {
		w.Write(fill)
	}
	w.Write(fill[:n*len(code)])
}

func merkleRoot(level [][32]byte) [32]byte {
	for len(level) > 1 {
		next := make([][32]byte, len(level)/2)
		for i := range next {
			h := sha256.New()
			h.Write([]byte{1})
			h.Write(level[2*i][:])
			h.Write(level[2*i+1][:])
			h.Sum(next[i][:0])
		}
		level = next
	}
	return level[0]
}

// CheckRoot verifies that d's root is the Merkle root of its leaves, so
// that a leaf list edited by hand cannot pass.
func (d *Digest) CheckRoot() error {
	if len(d.Leaves) != Leaves || d.ChunkLog2 != ChunkLog2 {
		return fmt.Errorf("%s: %d leaves of 2^%d inputs, want %d of 2^%d", d.Conversion, len(d.Leaves), d.ChunkLog2, Leaves, ChunkLog2)
	}
	leaves := make([][32]byte, Leaves)
	for i, s := range d.Leaves {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) != 32 {
			return fmt.Errorf("%s: leaf %d is not a SHA-256 hex digest", d.Conversion, i)
		}
		copy(leaves[i][:], b)
	}
	root := merkleRoot(leaves)
	if got := hex.EncodeToString(root[:]); got != d.Root {
		return fmt.Errorf("%s: root %s does not match its leaves (they give %s)", d.Conversion, d.Root, got)
	}
	return nil
}

// Mismatch localises a difference between two digests of one conversion.
type Mismatch struct {
	Conversion string
	// Chunks are the indices of the differing leaves.
	Chunks []int
}

func (m *Mismatch) Error() string {
	lo := uint32(m.Chunks[0]) << ChunkLog2
	return fmt.Sprintf("%s: %d of %d chunks differ; first chunk %d (inputs 0x%08x..0x%08x)",
		m.Conversion, len(m.Chunks), Leaves, m.Chunks[0], lo, lo+Chunk-1)
}

// Compare returns nil when got equals want, else a *Mismatch listing the
// differing chunks (or an error when the digests are not comparable).
func Compare(want, got *Digest) error {
	if want.Conversion != got.Conversion || want.Width != got.Width || want.ChunkLog2 != got.ChunkLog2 || len(want.Leaves) != len(got.Leaves) {
		return fmt.Errorf("digests of %s (width %d, 2^%d) and %s (width %d, 2^%d) are not comparable",
			want.Conversion, want.Width, want.ChunkLog2, got.Conversion, got.Width, got.ChunkLog2)
	}
	m := &Mismatch{Conversion: want.Conversion}
	for i := range want.Leaves {
		if want.Leaves[i] != got.Leaves[i] {
			m.Chunks = append(m.Chunks, i)
		}
	}
	if len(m.Chunks) == 0 {
		if want.Root != got.Root {
			return fmt.Errorf("%s: leaves agree but roots differ", want.Conversion)
		}
		return nil
	}
	return m
}

// Difference is the first input of a chunk on which two engines disagree.
type Difference struct {
	Conversion string
	Input      uint32 // float32 bit pattern
	Want, Got  uint32 // codes
}

func (d *Difference) Error() string {
	return fmt.Sprintf("%s: first differing input 0x%08x (%g): reference code 0x%x, got 0x%x",
		d.Conversion, d.Input, math.Float32frombits(d.Input), d.Want, d.Got)
}

// Localize recomputes one chunk with the reference ref and with u and
// returns the first input where they disagree, or nil if they agree on
// the whole chunk (then the difference is not in u's outputs but in the
// digests compared).
func Localize(ctx context.Context, ref, u Unary, conv string, chunk int) (*Difference, error) {
	c, err := unary.Lookup(conv)
	if err != nil {
		return nil, err
	}
	if chunk < 0 || chunk >= Leaves {
		return nil, fmt.Errorf("chunk %d out of range [0, %d)", chunk, Leaves)
	}
	w := c.Width()
	a := make([]byte, callInputs*w)
	b := make([]byte, callInputs*w)
	for off := 0; off < Chunk; off += callInputs {
		start := uint32(chunk*Chunk + off)
		if err := ref.Unary(ctx, conv, start, a); err != nil {
			return nil, err
		}
		if err := u.Unary(ctx, conv, start, b); err != nil {
			return nil, err
		}
		for i := 0; i < callInputs; i++ {
			x, y := code(a, i, w), code(b, i, w)
			if x != y {
				return &Difference{Conversion: conv, Input: start + uint32(i), Want: x, Got: y}, nil
			}
		}
	}
	return nil, nil
}

func code(b []byte, i, w int) uint32 {
	if w == 1 {
		return uint32(b[i])
	}
	return uint32(b[2*i]) | uint32(b[2*i+1])<<8
}

//go:embed digests
var committed embed.FS

// FileName is the committed file of a conversion inside digests/:
// "e2m1/nvidia" -> "e2m1.nvidia.json".
func FileName(conv string) string { return strings.ReplaceAll(conv, "/", ".") + ".json" }

// Committed returns the checked-in digest of conv, with its root checked
// against its leaves.
func Committed(conv string) (*Digest, error) {
	return Read(committed, "digests/"+FileName(conv), conv)
}

// Read loads a digest file from fsys and checks it names conv and that its
// root matches its leaves.
func Read(fsys fs.FS, name, conv string) (*Digest, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("no committed digest for %s: %w", conv, err)
	}
	var d Digest
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: malformed: %w", name, err)
	}
	if d.Conversion != conv {
		return nil, fmt.Errorf("%s: holds %q, want %q", name, d.Conversion, conv)
	}
	if err := d.CheckRoot(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &d, nil
}

// Marshal encodes d as committed: indented JSON with a final newline.
func (d *Digest) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	return append(b, '\n'), err
}
