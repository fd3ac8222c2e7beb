package gemv

import (
	"math"

	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/nanconv"
)

// fma32 returns x*y + z rounded once to float32 (round to nearest even),
// the result of a hardware float32 FMA. float32(math.FMA(...)) would round
// twice (to float64, then to float32) and can land on a float32 midpoint
// that the exact value is not on; the exact error of the float64 sum
// breaks that tie.
func fma32(x, y, z float32) float32 {
	p := float64(float64(x) * float64(y)) // exact: 24+24 bits, no underflow
	zz := float64(z)
	s := p + zz
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// TwoSum: e is exactly (p + zz) - s.
	bb := s - p
	e := (p - (s - bb)) + (zz - bb)
	// Step s one float64 ulp toward the exact value when e != 0, as
	// math.Nextafter(s, ±Inf) does: a non-zero s steps by one unit of its
	// bit pattern, up in magnitude when e has s's sign. (A sum that rounds
	// to 0 is exact, so s == 0 has e == 0; Nextafter covers it anyway.)
	// Written with selects rather than branches or a call: e is non-zero
	// for most sums, and Go's wasm code pays a dispatch for every taken
	// branch and more for a call than for the rest of fma32.
	if s == 0 && e != 0 {
		return float32(math.Nextafter(s, e))
	}
	b := math.Float64bits(s)
	step := 1 - 2*((math.Float64bits(e)^b)>>63) // +1 or -1 (mod 2^64)
	if e == 0 {
		step = 0
	}
	s = math.Float64frombits(b + step)
	// s is now on the same side of every float32 midpoint as the exact
	// value (float32 midpoints are float64 numbers 2^29 float64 ulps apart).
	return float32(s)
}

// round16 rounds a float32 to the nearest fp16 value, returned as float32.
func round16(x float32) float32 { return half.DecodeFP16(half.EncodeFP16(x)) }

func roundTo(p Precision, x float32) float32 {
	if p == FP16 {
		return round16(x)
	}
	return x
}

// mac adds x*y to acc under the schedule's fusion and accumulator
// precision.
func (s *Schedule) mac(acc, x, y float32) float32 {
	if s.Accum == FP16 {
		// fp16 add of fp16 operands done in float32 then rounded to fp16
		// is the correctly rounded fp16 sum (24 >= 2*11+2).
		return round16(acc + round16(float32(x*y)))
	}
	if s.Fused {
		return fma32(x, y, acc)
	}
	return float32(x*y) + acc
}

// chain sums the products a[i]*b[i] of one group: p0, then p += a[i]*b[i],
// fused or not. Accumulation inside a group is float32.
func (s *Schedule) chain(a, b []float32) float32 {
	p := float32(a[0] * b[0])
	for i := 1; i < len(a); i++ {
		if s.Fused {
			p = fma32(a[i], b[i], p)
		} else {
			p = float32(a[i]*b[i]) + p
		}
	}
	return p
}

// run evaluates Σ_g x[g]*y[g] under s, where group g covers K elements
// [g*GroupK, (g+1)*GroupK). lanes is scratch space (reused between calls).
func (s *Schedule) run(x, y []float32, lanes []float32) (float32, []float32) {
	nGroups := len(x)
	k := nGroups * s.GroupK
	chunk := s.ChunkK
	if chunk == 0 || chunk > k {
		chunk = k
	}
	nChunks := 1
	if chunk > 0 {
		nChunks = (k + chunk - 1) / chunk
	}
	nLanes := s.Lanes
	if nLanes == 0 {
		nLanes = nChunks
	}
	width := 0
	if s.Reduce == Butterfly {
		width = s.Width
		if nLanes%width != 0 {
			// Idle lanes hold +0, as threads without work do.
			nLanes += width - nLanes%width
		}
	}
	if cap(lanes) < nLanes {
		lanes = make([]float32, nLanes)
	}
	lanes = lanes[:nLanes]
	for i := range lanes {
		lanes[i] = 0
	}
	gpc := chunk / s.GroupK // groups per chunk
	if gpc == 0 {
		gpc = 1
	}
	if s.Accum == FP32 && s.Fused {
		// mac's case for mmvq and the sparse schedules, without its
		// per-group branches.
		for g := 0; g < nGroups; g++ {
			l := (g / gpc) % nLanes
			lanes[l] = fma32(x[g], y[g], lanes[l])
		}
	} else {
		for g := 0; g < nGroups; g++ {
			l := (g / gpc) % nLanes
			lanes[l] = s.mac(lanes[l], x[g], y[g])
		}
	}
	if s.Partial == FP16 || s.Accum == FP16 {
		for i := range lanes {
			lanes[i] = roundTo(s.Partial, lanes[i])
		}
	}
	var r float32
	switch s.Reduce {
	case Sequential:
		r = lanes[0]
		for _, v := range lanes[1:] {
			r += v
		}
	case Pairwise:
		n := len(lanes)
		for n > 1 {
			h := 0
			for i := 0; i+1 < n; i += 2 {
				lanes[h] = lanes[i] + lanes[i+1]
				h++
			}
			if n%2 == 1 {
				lanes[h] = lanes[n-1]
				h++
			}
			n = h
		}
		r = lanes[0]
	case Butterfly:
		for w := width; w < len(lanes); w += width {
			for l := 0; l < width; l++ {
				lanes[l] += lanes[w+l]
			}
		}
		for off := width / 2; off > 0; off >>= 1 {
			for l := 0; l < off; l++ {
				lanes[l] += lanes[l+off]
			}
		}
		r = lanes[0]
	case Strided:
		w := min(s.Width, len(lanes))
		for i := w; i < len(lanes); i++ {
			lanes[i%w] += lanes[i]
		}
		r = lanes[0]
		for _, v := range lanes[1:w] {
			r += v
		}
	}
	if s.ZeroInit && math.Float32bits(r) == 0x80000000 {
		r = 0 // the only result a +0 start changes (Schedule.ZeroInit)
	}
	if s.CanonicalNaN && r != r {
		r = math.Float32frombits(nanconv.CUDANaN)
	}
	return roundTo(s.Out, r), lanes
}
