package gate

import (
	"context"
	"errors"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// HostReference is the host reference of the exhaustive sweeps: the
// refimpl/unary conversion itself (what golden.Native runs), as an
// exhaustive.Unary.
type HostReference struct{}

// Unary computes conv's codes of the inputs start, start+1, ...
func (HostReference) Unary(ctx context.Context, conv string, start uint32, out []byte) error {
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
	d, err = exhaustive.Compute(ctx, HostReference{}, conv, workers, nil)
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
			if diff, lerr := exhaustive.Localize(ctx, HostReference{}, e.KernelUnary(k), k.Conversion, mm.Chunks[0]); lerr == nil && diff != nil {
				v.Detail += "; " + diff.Error()
			}
		}
		return v, nil
	}
	v.Result, v.Detail = certificate.Pass, "root "+got.Root[:16]+"…"
	return v, nil
}
