// Package corpus is the input corpus and the record format of the
// ggml GGUF harness: ggml's C reference quantizers, dequantizers and
// generic dot products (gguf.c, built by run.sh) and refimpl/gguf run on
// the same deterministic inputs, and a record holds what the C did.
//
// The corpus is built to find the reported ways GGUF reimplementations
// break: all-zero blocks (a test on them passes whatever the scale
// unpacking does), sub-blocks whose scales all differ (a 6-bit/4-bit
// scale unpack mix-up moves every element), values that land on x.5 of
// the quantization grid and one float32 ulp below it (roundf against
// floor(x+0.5), and x*id+c contracted or not), non-finite and extreme
// blocks, and every level of the IQ4 table with every 6-bit IQ4_XS
// scale.
package corpus

import (
	"encoding/binary"
	"math"

	"github.com/bitexact/bitexact/refimpl/gguf"
)

// Groups is the number of 256-value groups in the quantize corpus.
const Groups = 112

// DotK is the row length of the dot-product corpus, DotRows its rows.
const (
	DotK    = 512
	DotRows = 48
)

// DequantBlocks is the number of blocks of each type in the dequantize
// corpus.
const DequantBlocks = 80

type rng struct{ s uint64 }

// next is splitmix64.
func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// unit is uniform in [-1, 1) on a 2^-23 grid.
func (r *rng) unit() float32 { return float32(int32(r.next()>>40)-(1<<23)) / (1 << 23) }

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// Floats is the quantize corpus: Groups groups of 256 float32, each a
// named kind of input (Kinds gives the names, one per group).
func Floats() []float32 {
	x, _ := build()
	return x
}

// Kinds names each group of Floats.
func Kinds() []string {
	_, k := build()
	return k
}

func nextBelow(v float32) float32 {
	if v == 0 {
		return -math.SmallestNonzeroFloat32
	}
	b := math.Float32bits(v)
	if v > 0 {
		return math.Float32frombits(b - 1)
	}
	return math.Float32frombits(b + 1)
}

// build makes the corpus. Every product that meets an add is converted
// to float32 first, so that Go does not fuse it and the corpus is the
// same on every host (GOAMD64=v3, arm64).
func build() ([]float32, []string) {
	r := &rng{s: 20260530}
	var x []float32
	var kinds []string
	add := func(kind string, g []float32) {
		if len(g) != 256 {
			panic("corpus: group of wrong length")
		}
		x = append(x, g...)
		kinds = append(kinds, kind)
	}
	g := func(f func(i int) float32) []float32 {
		v := make([]float32, 256)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	inf := float32(math.Inf(1))
	nan := math.Float32frombits(0x7FC00000)
	negNaN := math.Float32frombits(0xFFC00000)

	add("zero", g(func(int) float32 { return 0 }))
	add("negzero", g(func(i int) float32 {
		if i%2 == 0 {
			return float32(math.Copysign(0, -1))
		}
		return 0
	}))
	// uniform random at several magnitudes
	for _, e := range []int{0, -3, 4, -12, 10, 15} {
		s := float32(math.Ldexp(1, e))
		add("uniform", g(func(int) float32 { return r.unit() * s }))
	}
	// gaussian-ish (sum of four uniforms), like trained weights
	for k := 0; k < 6; k++ {
		add("gauss", g(func(int) float32 {
			return float32(r.unit()+r.unit()+r.unit()+r.unit()) * 0.02
		}))
	}
	// every 16-value sub-block with its own magnitude: the scales of a
	// K-quant block all differ, so a 6-bit/4-bit unpack mix-up shows
	for k := 0; k < 6; k++ {
		add("subscales", g(func(i int) float32 {
			sub := i / 16
			s := float32(math.Ldexp(1+float64(sub)/7, sub%5-2))
			return r.unit() * s
		}))
	}
	// sub-block magnitudes ramping 1..16 and offsets (mins differ too)
	for k := 0; k < 4; k++ {
		off := r.unit()
		add("subscales-min", g(func(i int) float32 {
			sub := i / 32
			return float32(off*float32(sub)) + float32(r.unit()*float32(1+sub+2*(i/16%2)))
		}))
	}
	// one sub-block dominates, the others are small
	for k := 0; k < 4; k++ {
		big := r.intn(16)
		add("one-big-subblock", g(func(i int) float32 {
			if i/16 == big {
				return r.unit() * 100
			}
			return r.unit() * 0.01
		}))
	}
	// x.5 ties on the grids: each 32-value block is (k + 0.5)*d for a
	// random d, anchored by the element that sets the block's scale, and
	// the float32 just below each tie
	anchors := []struct {
		kind       string
		anchor, hi float32
	}{
		{"ties-q4_0", -8, 8}, {"ties-q5_0", -16, 16}, {"ties-q8_0", 127, 127}, {"ties-q2_0", 1, 2},
	}
	for _, a := range anchors {
		for k := 0; k < 3; k++ {
			below := k == 1
			var ds [8]float32
			for b := range ds {
				ds[b] = float32(math.Ldexp(1+float64(r.intn(1000))/1000, r.intn(8)-4))
				if k == 2 {
					ds[b] = float32(math.Ldexp(1, r.intn(8)-4)) // exact scales
				}
			}
			add(a.kind, g(func(i int) float32 {
				d := ds[i/32]
				if i%32 == 0 {
					return a.anchor * d
				}
				q := float32(r.intn(int(2*a.hi))) - a.hi + 0.5
				v := q * d
				if below {
					v = nextBelow(v)
				}
				return v
			}))
		}
	}
	// 0.49999997 and 0.5 directly (unit scale for q8_0: anchor 127)
	add("half-ulp", g(func(i int) float32 {
		switch i % 8 {
		case 0:
			return 127
		case 1:
			return 0.49999997
		case 2:
			return 0.5
		case 3:
			return -0.49999997
		case 4:
			return 1.5
		case 5:
			return 2.5
		case 6:
			return -2.5
		}
		return 126.5
	}))
	// ramps and constants
	add("ramp", g(func(i int) float32 { return float32(i-128) / 16 }))
	add("ramp-positive", g(func(i int) float32 { return 1 + float32(i)/256 }))
	add("const", g(func(int) float32 { return 0.75 }))
	add("const-negative", g(func(int) float32 { return -3 }))
	add("spike", g(func(i int) float32 {
		if i == 77 {
			return -5
		}
		return 0
	}))
	add("spike-per-block", g(func(i int) float32 {
		if i%32 == 31 {
			return float32(i)
		}
		return 0
	}))
	// group-max-eps boundary and tiny values
	for _, s := range []float32{1e-15, 2e-15, 1e-16, 1e-30, 1e-38, 1e-44} {
		add("tiny", g(func(int) float32 { return r.unit() * s }))
	}
	// large values: beyond fp16's range in the scale, near float32's max
	for _, s := range []float32{6e4, 1e5, 3e6, 1e20, 3e38} {
		add("large", g(func(int) float32 { return r.unit() * s }))
	}
	add("max", g(func(i int) float32 {
		if i%3 == 0 {
			return math.MaxFloat32
		}
		return -r.unit() * math.MaxFloat32
	}))
	// non-finite elements (one per 32-value block, at varying places)
	for _, v := range []float32{inf, -inf, nan, negNaN} {
		v := v
		add("nonfinite", g(func(i int) float32 {
			if i%32 == (i/32*5)%32 {
				return v
			}
			return r.unit()
		}))
	}
	add("nan-last", g(func(i int) float32 {
		if i%32 == 31 {
			return nan
		}
		return r.unit()
	}))
	add("inf-all", g(func(i int) float32 {
		if i%2 == 0 {
			return inf
		}
		return -inf
	}))
	// whole blocks of +Inf, -Inf, NaN, and Inf with NaN: no element
	// finite, so every running max, min and amax starts from its initial
	// value and meets only non-finite values
	add("nonfinite-blocks", g(func(i int) float32 {
		switch i / 32 % 4 {
		case 0:
			return inf
		case 1:
			return -inf
		case 2:
			return nan
		}
		if i%2 == 0 {
			return inf
		}
		return nan
	}))
	// fill the rest with random blocks of mixed character
	for len(kinds) < Groups {
		mode := r.intn(4)
		sc := float32(math.Ldexp(1, r.intn(20)-10))
		add("mixed", g(func(i int) float32 {
			switch mode {
			case 0:
				return r.unit() * sc
			case 1:
				return (float32(r.unit()*0.1) + 0.3) * sc // all positive
			case 2:
				return float32(r.intn(17)-8) * sc / 4 // on a grid
			}
			return r.unit() * r.unit() * r.unit() * sc // heavy near zero
		}))
	}
	return x[:Groups*256], kinds[:Groups]
}

// scaleFields are the byte offsets of a block's fp16 scale fields (d,
// dmin, m).
func scaleFields(t gguf.Type) []int {
	switch t {
	case gguf.Q4_1, gguf.Q5_1, gguf.Q4_K, gguf.Q5_K:
		return []int{0, 2}
	case gguf.Q2_K:
		return []int{80, 82}
	case gguf.Q3_K:
		return []int{108}
	case gguf.Q6_K:
		return []int{208}
	case gguf.TQ1_0:
		return []int{52}
	case gguf.TQ2_0:
		return []int{64}
	case gguf.Q8_K, gguf.NVFP4:
		return nil
	}
	return []int{0}
}

// finiteFP16 is a random finite fp16 of magnitude 2^-12..2^3.
func (r *rng) finiteFP16() uint16 {
	sign := uint16(r.intn(2)) << 15
	return sign | uint16(3+r.intn(16))<<10 | uint16(r.intn(1024))
}

// specialFP16 are the scale values a dequantizer must survive.
var specialFP16 = []uint16{0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7D01, 0x3C00}

// Blocks is the dequantize corpus of type t: DequantBlocks blocks of
// random bytes with finite random scales, then blocks whose scales are
// the special fp16 values (zero, subnormal, largest, Inf, NaN, signalling
// NaN; the second scale field of a two-scale type keeps a finite random
// value, so a NaN never meets another NaN). IQ4 blocks hold every level;
// IQ4_XS blocks together hold every 6-bit scale; NVFP4 blocks together
// hold every UE4M3 code; Q8_K's float32 d covers zero, Inf and NaN.
func Blocks(t gguf.Type) []byte {
	r := &rng{s: 0xB10C5 ^ uint64(t)<<32}
	bb := t.BlockBytes()
	b := make([]byte, DequantBlocks*bb)
	for i := range b {
		b[i] = byte(r.next())
	}
	fields := scaleFields(t)
	for i := 0; i < DequantBlocks; i++ {
		blk := b[i*bb : (i+1)*bb]
		for _, f := range fields {
			binary.LittleEndian.PutUint16(blk[f:], r.finiteFP16())
		}
		if i >= DequantBlocks-len(specialFP16) && len(fields) > 0 {
			binary.LittleEndian.PutUint16(blk[fields[0]:], specialFP16[i-(DequantBlocks-len(specialFP16))])
		}
		switch t {
		case gguf.IQ4_NL:
			for j := 0; j < 16; j++ {
				blk[2+j] = byte((j+i)%16 | (15-(j+i)%16)<<4)
			}
		case gguf.IQ4_XS:
			for j := 0; j < 128; j++ {
				blk[8+j] = byte((j+i)%16 | (15-(j+i)%16)<<4)
			}
			if i < 8 { // blocks 0..7: scales 8i..8i+7
				var sh uint16
				for ib := 0; ib < 8; ib++ {
					ls := uint8(8*i + ib)
					if ib%2 == 0 {
						blk[4+ib/2] = ls & 0xF
					} else {
						blk[4+ib/2] |= (ls & 0xF) << 4
					}
					sh |= uint16(ls>>4) << (2 * ib)
				}
				binary.LittleEndian.PutUint16(blk[2:], sh)
			}
		case gguf.NVFP4:
			for s := 0; s < 4; s++ {
				blk[s] = byte(4*i + s) // blocks 0..63 hold codes 0..255
			}
		case gguf.Q8_K:
			d := (r.unit() + 2) * 1e-3
			switch i {
			case DequantBlocks - 1:
				d = 0
			case DequantBlocks - 2:
				d = float32(math.Inf(1))
			case DequantBlocks - 3:
				d = math.Float32frombits(0x7FC00000)
			case DequantBlocks - 4:
				d = math.Float32frombits(0xFFA00001)
			}
			binary.LittleEndian.PutUint32(blk, math.Float32bits(d))
		}
	}
	return b
}

// DotWeights is the weight rows of dot product d: DotRows rows of DotK
// elements of random blocks with finite scales (a non-finite scale makes
// the row sum NaN, whose payload then depends on the order in which the
// compiler gives NaN operands; the dequantize corpus covers those
// scales).
func DotWeights(d gguf.Dot) []byte {
	t := d.W
	r := &rng{s: 0xD07 ^ uint64(t)<<32}
	nb := DotRows * DotK / t.BlockElems()
	bb := t.BlockBytes()
	b := make([]byte, nb*bb)
	for i := range b {
		b[i] = byte(r.next())
	}
	for i := 0; i < nb; i++ {
		for _, f := range scaleFields(t) {
			binary.LittleEndian.PutUint16(b[i*bb+f:], r.finiteFP16())
		}
	}
	return b
}

// DotActs is the activation rows of the dot products: the finite groups
// of the quantize corpus, DotK values per row, cycled to DotRows rows.
func DotActs() []float32 {
	x, _ := build()
	var fin []float32
	for g := 0; g < Groups; g++ {
		grp := x[g*256 : (g+1)*256]
		ok := true
		for _, v := range grp {
			if math.IsInf(float64(v), 0) || v != v || abs(v) > 1e30 {
				ok = false
			}
		}
		if ok {
			fin = append(fin, grp...)
		}
	}
	out := make([]float32, 0, DotRows*DotK)
	for i := 0; len(out) < DotRows*DotK; i++ {
		out = append(out, fin[(i*256)%len(fin):(i*256)%len(fin)+256]...)
	}
	return out
}

func abs(v float32) float32 { return float32(math.Abs(float64(v))) }
