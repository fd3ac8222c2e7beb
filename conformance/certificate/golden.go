package certificate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"sync"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
)

// releasedDigests are the manifest SHA-256 of the released golden sets
// this build knows: the embedded one. A set loaded from a directory is
// released only if its manifest is byte-identical to it.
var releasedDigests = sync.OnceValue(func() map[string]bool {
	b, err := fs.ReadFile(golden.DataFS(), golden.ManifestFile)
	if err != nil {
		return map[string]bool{}
	}
	h := sha256.Sum256(b)
	return map[string]bool{hex.EncodeToString(h[:]): true}
})

// ReleasedGoldenSHA256 is the manifest digest of the embedded (released)
// golden set.
func ReleasedGoldenSHA256() string {
	for d := range releasedDigests() {
		return d
	}
	return ""
}

func goldenSetOf(manifestSHA256 string) string {
	if releasedDigests()[manifestSHA256] {
		return GoldenReleased
	}
	return GoldenUnreleased
}

func unreleasedReason(manifestSHA256 string) string {
	return "golden set manifest SHA-256 " + manifestSHA256 + " is not a released golden set (this build's is " + ReleasedGoldenSHA256() + ")"
}

// ClaimLayout is the results.Options.ClaimLayout of a certification of
// suite s: for a spec-string claim (a GEMV schedule no golden case
// names), the layout of the outputs ref computes for the task from its
// golden inputs; for a named profile, nil (any profile's layout of the
// task); for a bound-mode suite, the y of the declared bound model
// (suite.BoundLayout). Otherwise a nil ref gives a nil hook.
func ClaimLayout(ctx context.Context, s *suite.Suite, set *golden.Set, ref golden.Engine) func(suite.Task, string) ([]golden.TensorInfo, error) {
	if s.Bound {
		// A bound-mode result is y in the declared model's precision.
		return s.BoundLayout
	}
	if ref == nil {
		return nil
	}
	return func(t suite.Task, claim string) ([]golden.TensorInfo, error) {
		if s.HasProfile(claim) {
			return nil, nil
		}
		in, err := set.Inputs(t.Cases[t.Profiles[0]])
		if err != nil {
			return nil, err
		}
		out, err := s.Compute(ctx, ref, t, claim, in)
		if err != nil {
			return nil, err
		}
		return golden.TensorInfos(out), nil
	}
}
