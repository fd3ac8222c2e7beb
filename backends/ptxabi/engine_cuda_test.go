//go:build cuda

package ptxabi

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/backends/cuda"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
)

// TestThirdPartyPTX certifies bitexact's own FP8 kernel loaded as a
// third-party PTX under the unary-e4m3 ABI (its signature and launch
// contract are the ABI's): it must conform to satfinite, exhaustively,
// and a claim of nosat must be rejected and diagnosed as satfinite.
func TestThirdPartyPTX(t *testing.T) {
	dev, err := cuda.Open(0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	defer dev.Close()
	ptx, err := os.ReadFile("../../backends/cuda/ptx/fp8.ptx")
	if err != nil {
		t.Fatal(err)
	}
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	md, err := suite.ManifestDigest(golden.DataFS())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := Options{Dev: dev, PTX: ptx, Kernel: "fp8_e4m3_satfinite", ABI: "unary-e4m3", Set: set, GoldenSHA256: md, ReferenceWasm: "test"}
	c, err := Certify(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Conforms || !c.Valid || c.Against != "satfinite" {
		t.Errorf("satfinite kernel: %s", c.Verdict)
	}
	for _, e := range c.Exhaustive {
		if want := e.Profile == "satfinite"; e.Conforms != want || e.Chunks != 256 {
			t.Errorf("exhaustive %s: conforms=%v over %d chunks (%s)", e.Conversion, e.Conforms, e.Chunks, e.First)
		}
	}
	t.Logf("%s", c.Verdict)

	o.Claim, o.SampleChunks = "nosat", 8
	c, err = Certify(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Conforms || c.Valid || c.Diagnosis == nil || !c.Diagnosis.Explained || c.Diagnosis.Classes[0].Class != "profile:satfinite" {
		t.Errorf("claim nosat: conforms=%v valid=%v verdict %s diagnosis %+v", c.Conforms, c.Valid, c.Verdict, c.Diagnosis)
	}

	o.Kernel = "no_such_kernel"
	if _, err := Certify(ctx, o); err == nil || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Errorf("missing entry point: err %v", err)
	}
}
