package certificate

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"sync"

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
