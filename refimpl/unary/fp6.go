package unary

import "github.com/bitexact/bitexact/refimpl/minifloat"

// The OCP MX v1.0 FP6 element formats (§5.3.2): no infinity, no NaN, both
// zeros; conversions saturate. docs/rationale/fp6-fnuz.md gives the
// sources.
var (
	// E2M3: bias 1, largest 7.5 (0x1f), smallest subnormal 0.125.
	fp6E2M3 = minifloat.Format{ExpBits: 2, ManBits: 3, Bias: 1, Specials: minifloat.Finite}
	// E3M2: bias 3, largest 28 (0x1f), smallest subnormal 0.0625.
	fp6E3M2 = minifloat.Format{ExpBits: 3, ManBits: 2, Bias: 3, Specials: minifloat.Finite}

	// fp6MLDtypes is ml_dtypes' float6_e2m3fn and float6_e3m2fn,
	// recorded over all 2^32 inputs (conformance/harness/mldtypes):
	// nearest even, overflow and ±Inf saturate, and a NaN becomes its
	// quiet_NaN(), which is -0, negated for a negative input.
	fp6MLDtypes = minifloat.Profile{Name: "ml_dtypes",
		Summary:  "nearest even, saturating; NaN -> -0, -NaN -> +0 (ml_dtypes float6_*fn)",
		Source:   "jax-ml/ml_dtypes ml_dtypes/include/mxfloat.h float6_e2m3fn, float6_e3m2fn via float8.h ConvertImpl (ml_dtypes 0.6.0, run)",
		Saturate: true, NaN: minifloat.NaNToFlippedZero}
)

var (
	_ = declare(minifloatFormat(fp6E2M3, Format{Name: "e2m3", Title: "FP6 E2M3", Code: "FP6 E2M3 code (one code per byte, low 6 bits)", Family: "fp6",
		Specials: "none: every code is a number (no Inf, no NaN); 0x20 is -0", Seed: 18, Rationale: "docs/rationale/fp6-fnuz.md"}),
		minifloatProfile(fp6E2M3, fp6MLDtypes))
	_ = declare(minifloatFormat(fp6E3M2, Format{Name: "e3m2", Title: "FP6 E3M2", Code: "FP6 E3M2 code (one code per byte, low 6 bits)", Family: "fp6",
		Specials: "none: every code is a number (no Inf, no NaN); 0x20 is -0", Seed: 19, Rationale: "docs/rationale/fp6-fnuz.md"}),
		minifloatProfile(fp6E3M2, fp6MLDtypes))
)
