package ggml

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
)

func blk(v ...float32) []float32 {
	b := make([]float32, QK)
	copy(b, v)
	return b
}

// TestQuantizeQ8_1 pins both profiles. fp16 bits were derived by hand from
// the float32 values (round to nearest even on the 10-bit fraction);
// float32 intermediates were checked with gcc float on x86-64.
func TestQuantizeQ8_1(t *testing.T) {
	nan := f32(0x7FC00000)
	cases := []struct {
		name string
		p    Q8_1Profile
		x    []float32
		d, s uint16
		qs   []int8
		src  string
	}{
		{"cpu rounds half away", Q8_1CPU, blk(127, 0.5, -0.5, 2.5, -63.5, 1.49), 0x3C00, 0x5430,
			[]int8{127, 1, -1, 3, -64, 1},
			"d = 1, id = 1; roundf; S = fp16(1*67), 67 = (1 + 48/1024)*2^6 -> 0x5430"},
		{"cuda sums x", Q8_1CUDA, blk(127, 0.5, -0.5, 2.5, -63.5, 1.49), 0x3C00, 0x5438,
			[]int8{127, 1, -1, 3, -64, 1},
			"butterfly: ((127 + -63.5) + -0.5) + ((0.5 + 1.49) + 2.5) = 67.49; fraction 55.8/1024 -> 56 -> 0x5438"},
		{"cpu x*(1/d) differs from cuda x/d (cpu)", Q8_1CPU, blk(f32(0x415EE148), f32(0x4016ED36)), 0x2F05, 0x4C16,
			[]int8{127, 22},
			"gcc: d=0x1.c1451ap-4, x*id = 0x1.58p+4 = 21.5 -> 22; S = fp16(149*d = 0x1.057d38p+4)"},
		{"cpu x*(1/d) differs from cuda x/d (cuda)", Q8_1CUDA, blk(f32(0x415EE148), f32(0x4016ED36)), 0x2F05, 0x4C12,
			[]int8{127, 21},
			"gcc: x/d = 0x1.57fffep+4 -> 21; S = fp16(amax + x = 0x1.049c96p+4)"},
		{"zero block cpu", Q8_1CPU, blk(), 0, 0, nil, "d = 0 -> id = 0 -> q = 0"},
		{"zero block cuda", Q8_1CUDA, blk(), 0, 0, nil, "amax == 0 -> q = 0"},
		{"cpu NaN last resets amax to NaN", Q8_1CPU, append(blk(1)[:31], nan), 0x7E00, 0x7E00, nil,
			"MAX fold ends NaN -> d = id = NaN -> (int8_t)NaN = 0 on x86-64; fp16(NaN)"},
		{"cpu NaN first is forgotten", Q8_1CPU, blk(nan, 127), 0x3C00, 0x57F0, []int8{0, 127},
			"MAX(0, NaN) = NaN, MAX(NaN, 127) = 127 -> d = 1; NaN*1 -> 0; S = fp16(127)"},
		{"cuda NaN ignored in amax, poisons the sum", Q8_1CUDA, blk(nan, 127), 0x3C00, 0x7FFF, []int8{0, 127},
			"fmaxf skips NaN; NaN/d -> 0; sum NaN -> half 0x7FFF (H100 run)"},
		{"subnormal d: cpu 1/d overflows", Q8_1CPU, blk(0x1p-140), 0, 0, []int8{0},
			"d = 2^-140/127 -> 2^-147 (subnormal), id = 2^147 -> +Inf, x*id = Inf -> (int8_t) 0 on x86-64"},
		{"subnormal d: cuda wraps 128", Q8_1CUDA, blk(0x1p-140), 0, 0x0000, []int8{-128},
			"x/d = 2^-140/2^-147 = 128 -> roundf 128 -> int32 128 -> low byte -128 (H100 run, no fast math)"},
	}
	for _, c := range cases {
		bs, err := QuantizeQ8_1(c.x, c.p)
		if err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		if b.D != c.d || b.S != c.s {
			t.Errorf("%s: d=%#04x s=%#04x, want d=%#04x s=%#04x (%s)", c.name, b.D, b.S, c.d, c.s, c.src)
		}
		want := make([]int8, QK)
		copy(want, c.qs)
		for j := range want {
			if b.Qs[j] != want[j] {
				t.Errorf("%s: q[%d] = %d, want %d (%s)", c.name, j, b.Qs[j], want[j], c.src)
			}
		}
	}
}

// TestQ8_1CUDAOnH100 compares the cuda profile with blocks computed on an
// H100 by testdata/q8_1_probe.cu (ggml's quantize_q8_1 arithmetic, nvcc
// -O3 -arch=sm_90, CUDA 13.0, without -use_fast_math): 256 records of 32
// float32 inputs and the 36-byte GPU block. The first 8 blocks are the
// named cases above plus subnormal inputs; the rest are random or built to
// sit near .5 ties.
func TestQ8_1CUDAOnH100(t *testing.T) {
	data, err := os.ReadFile("testdata/q8_1_cuda_h100.bin")
	if err != nil {
		t.Fatal(err)
	}
	const rec = 4*QK + Q8_1BlockBytes
	if len(data) != 256*rec {
		t.Fatalf("testdata has %d bytes, want %d", len(data), 256*rec)
	}
	for r := 0; r < 256; r++ {
		p := data[r*rec:]
		x := make([]float32, QK)
		for j := range x {
			x[j] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*j:]))
		}
		gpu, _ := ParseQ8_1(p[4*QK : rec])
		got, _ := QuantizeQ8_1(x, Q8_1CUDA)
		if got[0] != gpu[0] {
			t.Errorf("block %d: reference %+v, H100 %+v", r, got[0], gpu[0])
		}
	}
}

func TestQ8_1ParseDequantize(t *testing.T) {
	bs, err := QuantizeQ8_1(blk(127, -3, 0.5), Q8_1CPU)
	if err != nil {
		t.Fatal(err)
	}
	raw := AppendQ8_1(nil, bs)
	if len(raw) != 36 || raw[0] != 0x00 || raw[1] != 0x3C || raw[4] != 127 || raw[5] != 0xFD {
		t.Fatalf("layout % x", raw[:6])
	}
	back, err := ParseQ8_1(raw)
	if err != nil || back[0] != bs[0] {
		t.Fatalf("round trip: %v", err)
	}
	y := DequantizeQ8_1(back)
	if y[0] != 127 || y[1] != -3 || y[2] != 1 || y[3] != 0 {
		t.Errorf("dequantized %v", y[:4])
	}
	if _, err := ParseQ8_1(make([]byte, 35)); err == nil {
		t.Error("35 bytes accepted")
	}
	if _, err := LookupQ8_1Profile("gpu"); err == nil {
		t.Error("unknown profile accepted")
	}
	_ = math.Pi
}

func BenchmarkQuantizeQ8_1_16M(b *testing.B) {
	x := benchData(4096 * 4096)
	for _, p := range []Q8_1Profile{Q8_1CPU, Q8_1CUDA} {
		b.Run(p.Name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for i := 0; i < b.N; i++ {
				if _, err := QuantizeQ8_1(x, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
