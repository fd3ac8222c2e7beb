package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// hostReference is the host reference of the exhaustive sweeps: the
// refimpl/unary conversion itself (what golden.Native runs), as an
// exhaustive.Unary.
type hostReference struct{}

// Unary computes conv's codes of the inputs start, start+1, ...
func (hostReference) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
	c, err := unary.Lookup(conv)
	if err != nil {
		return err
	}
	c.EncodeRange(start, out)
	return ctx.Err()
}

// ReferenceDigest returns the committed Merkle digest of conv
// (golden/exhaustive), or, where none is committed, computes it from the
// host reference on workers goroutines; ref says which.
func ReferenceDigest(ctx context.Context, conv string, workers int) (d *exhaustive.Digest, ref string, err error) {
	if d, err := exhaustive.Committed(conv); err == nil {
		return d, "committed Merkle digest golden/exhaustive/digests/" + exhaustive.FileName(conv), nil
	}
	d, err = exhaustive.Compute(ctx, hostReference{}, conv, workers, nil)
	if err != nil {
		return nil, "", err
	}
	return d, "Merkle digest of refimpl computed on the host in this run (no committed digest)", nil
}

// Exhaustive sweeps unary kernel k (its range form, Ranger) over all 2^32
// float32 inputs on workers goroutines and compares the Merkle digest of
// its codes with the reference's digest of k.Conversion; a difference is
// localised to its first input. An error means the sweep did not run.
func Exhaustive(ctx context.Context, e Engine, k Kernel, workers int) (certificate.Verdict, error) {
	v := certificate.Verdict{Kernel: k.Name, Claim: k.Conversion, Check: "exhaustive", Inputs: 1 << 32}
	want, ref, err := ReferenceDigest(ctx, k.Conversion, workers)
	if err != nil {
		return v, err
	}
	v.Reference = ref
	t0 := time.Now()
	got, err := exhaustive.Compute(ctx, e.KernelUnary(k), k.Conversion, workers, nil)
	v.Seconds = time.Since(t0).Seconds()
	if err != nil {
		v.Result, v.Detail = certificate.Fail, err.Error()
		return v, nil
	}
	if err := exhaustive.Compare(want, got); err != nil {
		v.Result, v.Detail = certificate.Fail, err.Error()
		var mm *exhaustive.Mismatch
		if errors.As(err, &mm) {
			if diff, lerr := exhaustive.Localize(ctx, hostReference{}, e.KernelUnary(k), k.Conversion, mm.Chunks[0]); lerr == nil && diff != nil {
				v.Detail += "; " + diff.Error()
			}
		}
		return v, nil
	}
	v.Result, v.Detail = certificate.Pass, "root "+got.Root[:16]+"…"
	return v, nil
}

// Profiles sweeps u, a unary kernel that computes its codes whatever
// conversion it is asked for (KernelUnary, or a third-party kernel), over
// the 2^24-input chunks of the float32 inputs (every chunk when sample is
// 0, else sample chunks evenly spaced: a sampled check that says nothing
// of the others) and compares its leaves with the committed Merkle digest
// of every conversion of format. The first difference from each is
// localised against the host reference. The result is the exhaustive part
// of a certificate.
func Profiles(ctx context.Context, u exhaustive.Unary, format string, sample, workers int) ([]certificate.Exhaustive, error) {
	if sample < 0 || sample > exhaustive.Leaves {
		return nil, fmt.Errorf("sample %d: want 0 (all) to %d chunks", sample, exhaustive.Leaves)
	}
	var convs []unary.Conversion
	for _, c := range unary.All() {
		if c.Format == format {
			convs = append(convs, c)
		}
	}
	if len(convs) == 0 {
		return nil, fmt.Errorf("no conversion of format %q", format)
	}
	chunks := make([]int, 0, exhaustive.Leaves)
	if sample == 0 || sample == exhaustive.Leaves {
		for i := range exhaustive.Leaves {
			chunks = append(chunks, i)
		}
	} else {
		for j := range sample {
			chunks = append(chunks, j*exhaustive.Leaves/sample)
		}
	}
	// The conversions of a format share its code width, which is all the
	// hashing takes from the conversion's name.
	leaves, err := exhaustive.ComputeLeaves(ctx, u, convs[0].Name, chunks, workers)
	if err != nil {
		return nil, fmt.Errorf("exhaustive sweep: %w", err)
	}
	var out []certificate.Exhaustive
	for _, c := range convs {
		d, err := exhaustive.Committed(c.Name)
		if err != nil {
			return nil, err
		}
		e := certificate.Exhaustive{Conversion: c.Name, Profile: c.Profile, Chunks: len(chunks)}
		first := -1
		for k, i := range chunks {
			if leaves[k] != d.Leaves[i] {
				e.Differing++
				if first < 0 {
					first = i
				}
			}
		}
		e.Conforms = e.Differing == 0
		if first >= 0 {
			diff, err := exhaustive.Localize(ctx, hostReference{}, u, c.Name, first)
			if err != nil {
				return nil, err
			}
			e.First = "chunk differs in the digest but not when recomputed"
			if diff != nil {
				e.First = fmt.Sprintf("input 0x%08x (%g): reference 0x%02x, kernel 0x%02x", diff.Input, math.Float32frombits(diff.Input), diff.Want, diff.Got)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Documented is how a third-party kernel is documented to differ from a
// profile it does not claim.
type Documented struct {
	// Where says which inputs differ and how, for the verdict ("the
	// negative NaNs (0xFF800001..0xFFFFFFFF: 0xF, nvidia 0x7)").
	Where string
	// Count is how many inputs differ.
	Count uint64
	// Expected reports whether a difference at input in (reference code
	// want, kernel code got) is the documented one.
	Expected func(in, want, got uint32) bool
}

// HeldAgainst sweeps unary kernel k (its range form) over all 2^32
// float32 inputs against conversion conv, a profile k does not claim, and
// requires that it differs exactly as documented: on d.Count inputs, each
// of them one d.Expected accepts. The verdict is then ExpectedDifference.
// The chunks whose digests differ are compared input by input with the
// host reference. An error means the sweep did not run.
func HeldAgainst(ctx context.Context, e Engine, k Kernel, conv string, d Documented, workers int) (certificate.Verdict, error) {
	v := certificate.Verdict{Kernel: k.Name, Claim: "held against " + conv + " (not its profile)", Check: "third-party", Inputs: 1 << 32}
	c, err := unary.Lookup(conv)
	if err != nil {
		return v, err
	}
	want, ref, err := ReferenceDigest(ctx, conv, workers)
	if err != nil {
		return v, err
	}
	v.Reference = ref
	t0 := time.Now()
	u := e.KernelUnary(k)
	got, err := exhaustive.Compute(ctx, u, conv, workers, nil)
	if err != nil {
		return v, err
	}
	var chunks []int
	var mm *exhaustive.Mismatch
	if err := exhaustive.Compare(want, got); errors.As(err, &mm) {
		chunks = mm.Chunks
	} else if err != nil {
		return v, err
	}
	const step = 1 << 20
	w := c.Width()
	a, b := make([]byte, step*w), make([]byte, step*w)
	var diffs, bad uint64
	var firstBad string
	for _, chunk := range chunks {
		for off := 0; off < exhaustive.Chunk; off += step {
			start := uint32(chunk*exhaustive.Chunk + off)
			c.EncodeRange(start, a)
			if err := u.Unary(ctx, conv, start, b); err != nil {
				return v, err
			}
			for i := range step {
				x, y := codeAt(a, i, w), codeAt(b, i, w)
				if x == y {
					continue
				}
				diffs++
				if in := start + uint32(i); !d.Expected(in, x, y) {
					bad++
					if firstBad == "" {
						firstBad = fmt.Sprintf("; first undocumented: input 0x%08x: %s 0x%x, kernel 0x%x", in, c.Profile, x, y)
					}
				}
			}
		}
	}
	v.Seconds = time.Since(t0).Seconds()
	if bad > 0 || diffs != d.Count {
		v.Result, v.Detail = certificate.Fail, fmt.Sprintf("%d differences, %d of them undocumented (documented: exactly %d, %s)%s", diffs, bad, d.Count, d.Where, firstBad)
		return v, nil
	}
	v.Result = certificate.ExpectedDifference
	v.Detail = fmt.Sprintf("differs from %s on exactly %d inputs, %s, and is equal on all others", c.Profile, diffs, d.Where)
	return v, nil
}

func codeAt(b []byte, i, w int) uint32 {
	if w == 1 {
		return uint32(b[i])
	}
	return uint32(b[2*i]) | uint32(b[2*i+1])<<8
}
