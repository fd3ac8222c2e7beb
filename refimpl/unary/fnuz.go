package unary

import "github.com/bitexact/bitexact/refimpl/minifloat"

// The FNUZ FP8 formats (finite, NaN, unsigned zero) of AMD's MI300 and
// LLVM: the code 0x80 is the one NaN, there is no infinity and no -0, and
// the biases are one more than OCP's. docs/rationale/fp6-fnuz.md gives
// the sources.
var (
	// E4M3FNUZ: bias 8, largest 240 (0x7f), smallest subnormal 2^-10.
	fp8E4M3FNUZ = minifloat.Format{ExpBits: 4, ManBits: 3, Bias: 8, Specials: minifloat.NaNAtNegZero}
	// E5M2FNUZ: bias 16, largest 57344 (0x7f), smallest subnormal 2^-17.
	fp8E5M2FNUZ = minifloat.Format{ExpBits: 5, ManBits: 2, Bias: 16, Specials: minifloat.NaNAtNegZero}

	// fnuzMLDtypes is ml_dtypes' float8_e4m3fnuz and float8_e5m2fnuz,
	// recorded over all 2^32 inputs (conformance/harness/mldtypes):
	// nearest even; overflow, ±Inf and NaN become the NaN 0x80; a zero
	// result is +0.
	fnuzMLDtypes = minifloat.Profile{Name: "ml_dtypes",
		Summary: "nearest even; overflow, Inf and NaN -> 0x80; zero -> 0x00 (ml_dtypes float8_*fnuz)",
		Source:  "jax-ml/ml_dtypes ml_dtypes/include/float8.h float8_e4m3fnuz, float8_e5m2fnuz ConvertImpl (ml_dtypes 0.6.0, run)",
		NaN:     minifloat.NaNToNaN}
)

var (
	_ = declare(minifloatFormat(fp8E4M3FNUZ, Format{Name: "e4m3fnuz", Title: "FP8 E4M3FNUZ", Code: "FP8 E4M3FNUZ (float8_e4m3fnuz) code", Family: "fp8",
		Specials: "0x80 is the one NaN; no Inf, no -0 (a zero result is 0x00)", Seed: 20, Rationale: "docs/rationale/fp6-fnuz.md", Peers: []string{"e4m3"}}),
		minifloatProfile(fp8E4M3FNUZ, fnuzMLDtypes))
	_ = declare(minifloatFormat(fp8E5M2FNUZ, Format{Name: "e5m2fnuz", Title: "FP8 E5M2FNUZ", Code: "FP8 E5M2FNUZ (float8_e5m2fnuz) code", Family: "fp8",
		Specials: "0x80 is the one NaN; no Inf, no -0 (a zero result is 0x00)", Seed: 21, Rationale: "docs/rationale/fp6-fnuz.md", Peers: []string{"e5m2"}}),
		minifloatProfile(fp8E5M2FNUZ, fnuzMLDtypes))
)
