//go:build darwin && metal

package metal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/bitexact/bitexact/golden"
)

// TestMetalGPU is the conformance suite on this Mac's GPU: the same
// runSuite as the Linux check, with the Metal Device as the backend.
// UNVERIFIED until run on a Mac (go test -tags metal ./backends/metal/).
func TestMetalGPU(t *testing.T) {
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	vs, err := runSuite(ctx, d, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Logf("  %-18s %-17s %-4s %9d outputs %6.2fs  %s", v.Kernel, v.Check, v.Result, v.Inputs, v.Seconds, v.Detail)
		if v.Result != "pass" {
			t.Errorf("%s (%s): %s", v.Kernel, v.Check, v.Detail)
		}
	}
	if *certDir != "" {
		dir := filepath.Join(*certDir, "metal-gpu")
		c := newCertificate("bitexact conformance (backends/metal, Metal GPU)", d, s, "embedded golden/data", vs)
		if err := c.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		t.Logf("certificate written to %s", dir)
	}
}
