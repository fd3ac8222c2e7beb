package e8m0

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// ScaleMode is how an MX block's shared E8M0 scale is derived from the
// block's absolute maximum amax.
type ScaleMode struct {
	Name string
	// Source names the specification or implementation reproduced.
	Source string
	// Summary says in one line what the scale mode does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
	rule    scaleRule
}

type scaleRule uint8

const (
	scaleFloor scaleRule = iota
	scaleCeil
	scaleEven
	scaleRCeil
)

// The scale modes.
var (
	// Floor is OCP MX v1.0 section 6.3: X = 2^(floor(log2 amax) - emaxElem).
	Floor = ScaleMode{Name: "floor", Summary: "E8M0 scale floor(log2(amax)) - emax (OCP MX v1.0)", Source: "OCP MX v1.0 §6.3; microsoft/microxcaling mx/mx_ops.py _shared_exponents; torchao ScaleCalculationMode.FLOOR", rule: scaleFloor}
	// Ceil rounds log2 amax up: X = 2^(ceil(log2 amax) - emaxElem).
	Ceil = ScaleMode{Name: "ceil", Summary: "E8M0 scale rounded up (ceil of log2)", Source: "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx, ScaleCalculationMode.CEIL", rule: scaleCeil}
	// Even first rounds amax to the element's precision (adding half an
	// element ulp to the float32 bits, carry allowed), then takes Floor.
	Even = ScaleMode{Name: "even", Summary: "E8M0 scale rounded to nearest even", Source: "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx, ScaleCalculationMode.EVEN", rule: scaleEven}
	// RCeil is X = 2^ceil(log2(amax/maxElem)), amax/maxElem one float32
	// division rounded to nearest even (cuBLAS block quantization; torchao
	// RCEIL computes amax*(1/maxElem), equal for E2M1 over all float32).
	RCeil = ScaleMode{Name: "rceil", Summary: "E8M0 scale from amax/emax rounded up (cuBLAS/TE RCEIL)", Source: "cuBLAS D-block quantization (cvt.rp.ue8m0x2.f32 of amax/max); pytorch/ao mx_tensor.py _to_mx_rceil", rule: scaleRCeil}
)

// ScaleModes lists the scale modes.
func ScaleModes() []ScaleMode { return []ScaleMode{Floor, Ceil, Even, RCeil} }

// LookupScaleMode returns the scale mode with the given name.
func LookupScaleMode(name string) (ScaleMode, error) {
	for _, m := range ScaleModes() {
		if m.Name == name {
			return m, nil
		}
	}
	return ScaleMode{}, fmt.Errorf("e8m0: unknown scale mode %q (known: floor, ceil, even, rceil)", name)
}

// LookupSharedScaleMode returns the scale mode or library scale mode with
// the given name.
func LookupSharedScaleMode(name string) (ScaleMode, error) {
	for _, m := range append(ScaleModes(), LibraryScaleModes()...) {
		if m.Name == name {
			return m, nil
		}
	}
	names := []string{}
	for _, m := range append(ScaleModes(), LibraryScaleModes()...) {
		names = append(names, m.Name)
	}
	return ScaleMode{}, fmt.Errorf("e8m0: unknown scale mode %q (known: %s)", name, strings.Join(names, ", "))
}

// String returns the mode's name.
func (m ScaleMode) String() string { return m.Name }

// SharedScale returns the E8M0 shared scale code for a block with absolute
// maximum amax, for an element format whose largest normal exponent is
// emaxElem (2 for E2M1) and largest value maxElem (6 for E2M1).
//
// The sign bit of amax is ignored. A NaN or infinite amax gives 0xFF. Floor,
// Ceil and Even read log2 from the float32 exponent and mantissa bits, so a
// subnormal amax is handled exactly; amax = 0 has log2 = -Inf and clamps to
// code 0x00, as in microxcaling (which substitutes the smallest normal) and
// torchao. Unbiased scale exponents below -127 clamp to 0x00; above 127 they
// give 0xFF, as torchao (clamp to 128, biased 255) and microxcaling (NaN)
// do; neither bound is reachable for E2M1 except through Even's carry
// (below).
//
// Even rounds amax at the element's mantissa width before taking the
// exponent. The width is that of maxElem's significand (1 for E2M1's 6 =
// 1.1b*2^2); this is right for E2M1, E2M3, E3M2 and E5M2 but not for
// E4M3FN, whose maximum 448 = 1.110b*2^8 does not use its whole mantissa.
// As in torchao, an amax that rounds up to infinity gives 0xFF.
//
// RCeil divides amax by maxElem in float32 (nearest even) and rounds the
// quotient's log2 up, treating a subnormal quotient as cvt.rp.ue8m0x2.f32
// does: above 2^-127 gives 0x01, otherwise 0x00. A quotient that overflows
// 2^127 gives 0xFF (torchao uses the non-saturating cvt.rp.ue8m0x2.f32).
//
// A library scale mode (LibraryScaleModes) computes what its library does,
// its doc says how.
func SharedScale(amax float32, mode ScaleMode, emaxElem int, maxElem float32) uint8 {
	if mode.rule >= scaleAOFloor && mode.rule < firstWild {
		return libraryScale(amax, mode, emaxElem, maxElem)
	}
	a := math.Float32bits(amax) & 0x7fffffff
	if a >= 0x7f800000 {
		return NaN
	}
	if mode.rule >= firstWild {
		return wildScale(a, mode.rule, emaxElem, maxElem)
	}
	switch mode.rule {
	case scaleRCeil:
		// One float32 division: Go rounds float32 / float32 to nearest even
		// and never fuses a division.
		q := math.Float32bits(math.Float32frombits(a)/maxElem) & 0x7fffffff
		if q >= 0x7f800000 {
			return NaN
		}
		// cvt.rp.ue8m0x2.f32 of q: the exact ceil(log2 q), which for a
		// subnormal q is -127 up to 2^-127 and -126 above it.
		return biasClamp(log2Floor(q, true))
	case scaleEven:
		if mb := mantissaBits(maxElem); mb < 23 {
			a += 1 << (22 - mb)
		}
		a &= 0x7f800000
		if a == 0x7f800000 {
			return NaN
		}
	}
	return biasClamp(log2Floor(a, mode.rule == scaleCeil) - emaxElem)
}

// log2Floor returns floor(log2 v), or ceil(log2 v) with up, exactly, for
// the non-negative float32 bits a; for zero it returns -1000, which clamps
// to code 0.
func log2Floor(a uint32, up bool) int {
	if a == 0 {
		return -1000
	}
	e := int(a>>23) - 127
	m := a & 0x7fffff
	if a < 1<<23 {
		// Subnormal: value m*2^-149, leading bit at position p.
		p := 31 - bits.LeadingZeros32(m)
		e = p - 149
		m &= 1<<p - 1
	}
	if up && m != 0 {
		e++
	}
	return e
}

func biasClamp(e int) uint8 {
	switch {
	case e < -127:
		return 0
	case e > 127:
		return NaN
	}
	return uint8(e + 127)
}

// mantissaBits is the number of fraction bits of v's significand.
func mantissaBits(v float32) int {
	m := math.Float32bits(v) & 0x7fffff
	if m == 0 {
		return 0
	}
	n := 23
	for m&1 == 0 {
		m >>= 1
		n--
	}
	return n
}
