// Package ptxabi defines the kernel ABIs under which `bitexact certify
// --backend cuda` runs a third-party PTX kernel, and (with the build tag
// cuda) runs it: every task of the ABI's suite through the kernel, then
// the certificate, and for unary ABIs the exhaustive sweep of all 2^32
// float32 inputs against the committed Merkle digests of every profile of
// the format. docs/vendor.md documents each ABI for kernel authors.
package ptxabi

import (
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/refimpl/unary"
)

// ABI is one kernel calling convention.
type ABI struct {
	Name string
	// Suite is the vendor suite the kernel is certified on.
	Suite string
	// DefaultClaim is the profile assumed when --profile is not given.
	DefaultClaim string
	// Format is the unary code format ("e2m1", "e4m3", "e5m2", "e8m0")
	// for ABIs swept exhaustively; empty otherwise.
	Format string
	// Packed: a unary ABI writing two 4-bit codes per byte (element 2i in
	// the low nibble).
	Packed bool
	// Signature is the CUDA C declaration the entry point must have.
	Signature string
	// Launch is the launch shape contract.
	Launch string
	// Layout describes the buffers.
	Layout string
}

// gridStride is the launch shape every ABI uses.
const gridStride = "1-D: blockDim (256,1,1), gridDim (min(ceil(W/256), 65535),1,1) for W work items; " +
	"the kernel must loop `for (i = blockIdx.x*blockDim.x + threadIdx.x; i < W; i += gridDim.x*blockDim.x)` and write nothing else"

// abis lists the kernel ABIs.
func abis() []ABI {
	unary := func(format string) ABI {
		return ABI{Name: "unary-" + format, Suite: format, Format: format,
			DefaultClaim: canonical(format),
			Signature:    `extern "C" __global__ void NAME(const float *x, unsigned char *out, unsigned long long n)`,
			Launch:       gridStride + "; W = n",
			Layout:       "out[i] = " + strings.ToUpper(format) + " code of x[i], one code per byte"}
	}
	return []ABI{
		{Name: "unary-e2m1", Suite: "e2m1", Format: "e2m1", Packed: true, DefaultClaim: canonical("e2m1"),
			Signature: `extern "C" __global__ void NAME(const float *x, unsigned char *out, unsigned long long n)`,
			Launch:    gridStride + "; W = n/2 (n is even)",
			Layout:    "out[i] = code(x[2i]) | code(x[2i+1]) << 4: two E2M1 codes per byte, element 2i in the low nibble (cvt.rn.satfinite.e2m1x2.f32 order)"},
		unary("e4m3"),
		unary("e5m2"),
		unary("e8m0"),
		{Name: "nvfp4-quantize", Suite: "nvfp4", DefaultClaim: "recipe=canonical,swizzle=0",
			Signature: `extern "C" __global__ void NAME(const float *x, unsigned char *packed, unsigned char *scales, float global, int rows, int cols)`,
			Launch:    gridStride + "; W = rows*cols/16 (one work item per 16-element block, block b = row b/(cols/16), columns 16*(b%(cols/16)) ...)",
			Layout: "x [rows][cols] float32 row-major, cols % 16 == 0; packed [rows][cols/2]: E2M1 pairs, element 2j in the low nibble; " +
				"scales [rows][cols/16]: E4M3 codes, row-major (linear, not swizzled); global: the recipe's per-tensor float32 " +
				"(g = 2688/amax for encode-scale recipes, p = amax/2688 for decode-scale ones), computed by the harness as the reference does " +
				"(the amax reduction is not part of the ABI) and echoed as the \"global\" output"},
		{Name: "awq-pack", Suite: "awq-pack", DefaultClaim: "awq",
			Signature: `extern "C" __global__ void NAME(const unsigned char *q, const unsigned char *zeros, int *qweight, int *qzeros, int IC, int OC, int G)`,
			Launch:    gridStride + "; W = IC*OC/8 (work item w writes qweight word w and, when w < (IC/G)*OC/8, qzeros word w)",
			Layout: "q [IC][OC] and zeros [IC/G][OC]: one 4-bit value per byte; qweight [IC][OC/8] and qzeros [IC/G][OC/8] int32 words " +
				"in the claimed layout (awq: column 8j+[0,2,4,6,1,3,5,7][p] in nibble p); only layouts with these shapes (awq) fit this ABI"},
		{Name: "sparse24-compress", Suite: "sparse24", DefaultClaim: "tie=lower-index,layout=rowmajor",
			Signature: `extern "C" __global__ void NAME(const unsigned char *codes, unsigned char *comp, unsigned char *meta, int N, int K)`,
			Launch:    gridStride + "; W = N*K/8 (work item w covers codes 8(w%(K/8)) .. +7 of row w/(K/8): two groups of four)",
			Layout: "codes [N][K]: one E2M1 code per byte; comp [N][K/4]: kept pair of group t as v(i0) | v(i1) << 4; " +
				"meta [N][K/8]: byte p = m(2p) | m(2p+1) << 4 with m(t) = i0 | i1 << 2, i0 < i1 (row-major layout only)"},
	}
}

// Lookup finds an ABI by name.
func Lookup(name string) (ABI, error) {
	var names []string
	for _, a := range abis() {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return ABI{}, fmt.Errorf("unknown ABI %q (ABIs: %s)", name, strings.Join(names, ", "))
}

// Conversion is the refimpl/unary conversion of a unary ABI's profile.
func (a ABI) Conversion(profile string) string { return a.Format + "/" + profile }

// canonical is the canonical profile of a unary format, the claim a unary
// ABI assumes when none is given.
func canonical(format string) string {
	f, err := unary.LookupFormat(format)
	if err != nil {
		panic("ptxabi: " + err.Error()) // the ABI list names only declared formats
	}
	return f.Canonical()
}
