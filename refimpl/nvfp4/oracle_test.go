package nvfp4_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/bitexact/bitexact/refimpl/mxfp4"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
)

// TestOracle compares the canonical NVFP4 recipe and default MXFP4 with an
// independent C implementation (testdata/oracle.c: its own E4M3 and E2M1
// encoders by exhaustive nearest search, gcc -O0 -ffp-contract=off on
// x86-64) on a 64x64 tensor of random normals, E2M1 grid points and
// midpoints, zeros, arbitrary bit patterns (NaN, Inf, subnormals), a zero
// row, an all-equal row and a subnormal row.
func TestOracle(t *testing.T) {
	const r, c = 64, 64
	data, err := os.ReadFile("testdata/oracle.bin")
	if err != nil {
		t.Fatal(err)
	}
	if want := 4*r*c + r*c/2 + r*c/16 + 4 + r*c/2 + r*c/32; len(data) != want {
		t.Fatalf("oracle.bin has %d bytes, want %d", len(data), want)
	}
	x := make([]float32, r*c)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	rest := data[4*r*c:]
	take := func(n int) []byte { b := rest[:n]; rest = rest[n:]; return b }
	np, ns, gb, mp, ms := take(r*c/2), take(r*c/16), take(4), take(r*c/2), take(r*c/32)

	q, err := nvfp4.Quantize(x, r, c, nvfp4.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	if g := math.Float32frombits(binary.LittleEndian.Uint32(gb)); q.Global != g {
		t.Errorf("nvfp4 global %v, oracle %v", q.Global, g)
	}
	if !bytes.Equal(q.Scales, ns) {
		t.Errorf("nvfp4 scales differ from the oracle")
	}
	for i := range np {
		if q.Packed[i] != np[i] {
			t.Errorf("nvfp4 packed byte %d (x=%v, %v): %#02x, oracle %#02x", i, x[2*i], x[2*i+1], q.Packed[i], np[i])
		}
	}
	m, err := mxfp4.Quantize(x, r, c, mxfp4.Default)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Scales, ms) {
		t.Errorf("mxfp4 scales differ from the oracle")
	}
	for i := range mp {
		if m.Packed[i] != mp[i] {
			t.Errorf("mxfp4 packed byte %d (x=%v, %v): %#02x, oracle %#02x", i, x[2*i], x[2*i+1], m.Packed[i], mp[i])
		}
	}
}
