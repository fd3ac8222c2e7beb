package mxfp4

import (
	"math"
	"strings"
	"testing"
)

// TestDequantizers pins single elements of each dequantizer. The
// ModelOpt values are those of the records under
// conformance/harness/modelopt/records/mxfp4-dequantize (task
// sep.mxfp4.every-scale holds every scale code with every element code).
func TestDequantizers(t *testing.T) {
	cases := []struct {
		name  string
		d     Dequantizer
		code  uint8
		scale uint8
		want  uint32
		why   string
	}{
		{"default 1.0 at 2^-127", DequantDefault, 0x2, 0, 0x00400000, "2^-127 exactly"},
		{"default NaN block", DequantDefault, 0x2, 0xFF, 0x7FC00000, "canonical NaN"},
		{"default -0 stays -0", DequantDefault, 0x8, 127, 0x80000000, "-0 * 1"},
		{"modelopt cpu 1.0 at 2^-127", ModelOptDequantCPU, 0x2, 0, 0x00400000, "CPU exp2(-127) is exact"},
		{"modelopt cuda 1.0 at 2^-127", ModelOptDequantCUDA, 0x2, 0, 0x003FFFFF, "CUDA exp2(-127) is one ulp low"},
		{"modelopt cuda 0.5 at 2^-127", ModelOptDequantCUDA, 0x1, 0, 0x00200000, "0x3FFFFF/2 = 0x1FFFFF.8 rounds to even"},
		{"modelopt cuda -1.5 at 2^-127", ModelOptDequantCUDA, 0xB, 0, 0x805FFFFE, "1.5*0x3FFFFF = 0x5FFFFE.8 rounds to even"},
		{"modelopt cuda 6 at 2^-126", ModelOptDequantCUDA, 0x7, 1, 0x01C00000, "exp2(-126) is exact on CUDA: 1.5*2^-124"},
		{"modelopt cpu 6 at 2^127 overflows", ModelOptDequantCPU, 0x7, 254, 0x7F800000, "6*2^127 > FLT_MAX"},
		{"modelopt cpu 1.0 at 0xFF", ModelOptDequantCPU, 0x2, 0xFF, 0x7F800000, "exp2(128) = +Inf"},
		{"modelopt cuda -6 at 0xFF", ModelOptDequantCUDA, 0xF, 0xFF, 0xFF800000, "-6 * +Inf"},
		{"modelopt cpu +0 at 0xFF", ModelOptDequantCPU, 0x0, 0xFF, 0xFFC00000, "0 * Inf: x86 default NaN"},
		{"modelopt cpu -0 at 0xFF", ModelOptDequantCPU, 0x8, 0xFF, 0xFFC00000, "-0 * Inf: x86 default NaN"},
		{"modelopt cuda -0 at 0xFF", ModelOptDequantCUDA, 0x8, 0xFF, 0x7FFFFFFF, "CUDA NaN"},
		{"modelopt cpu -0", ModelOptDequantCPU, 0x8, 100, 0x80000000, "sign -1 times 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := make([]uint8, BlockSize/2)
			for i := range p {
				p[i] = c.code | c.code<<4
			}
			y, err := c.d.Dequantize(Quantized{Rows: 1, Cols: BlockSize, Packed: p, Scales: []uint8{c.scale}})
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range y {
				if got := math.Float32bits(v); got != c.want {
					t.Fatalf("element %d = %#08x, want %#08x (%s)", i, got, c.want, c.why)
				}
			}
		})
	}
}

// TestDequantizersAgreeOnFinite checks that each dequantizer is the
// reference wherever its library's arithmetic is exact: every scale code
// but 0xFF (and, on CUDA, 0), every element code.
func TestDequantizersAgreeOnFinite(t *testing.T) {
	for _, d := range Dequantizers() {
		for sc := 0; sc < NaNScale; sc++ {
			if sc == 0 && d.device == CUDA {
				continue
			}
			p := make([]uint8, BlockSize/2)
			for i := range p {
				p[i] = uint8(i) | uint8(15-i)<<4
			}
			q := Quantized{Rows: 1, Cols: BlockSize, Packed: p, Scales: []uint8{uint8(sc)}}
			want, _ := Dequantize(q)
			got, err := d.Dequantize(q)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s scale %#02x element %d: %#08x, reference %#08x", d, sc, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}

func TestLookupDequantizer(t *testing.T) {
	for _, d := range Dequantizers() {
		got, ok := LookupDequantizer(d.Name)
		if !ok || got != d {
			t.Errorf("LookupDequantizer(%q) = %v, %v", d.Name, got, ok)
		}
		if d.Recorded() && !strings.Contains(d.Source, "conformance/harness/") {
			t.Errorf("%s: Source %q names no harness", d, d.Source)
		}
	}
	if _, ok := LookupDequantizer("modelopt"); ok {
		t.Error("LookupDequantizer(\"modelopt\") found a dequantizer")
	}
	if _, err := ModelOptDequantCPU.Dequantize(Quantized{Rows: 1, Cols: BlockSize, Packed: make([]uint8, 15), Scales: []uint8{0}}); err == nil || !strings.Contains(err.Error(), "packed has 15 bytes") {
		t.Errorf("short packed: err %v", err)
	}
}
