package nvfp4

import (
	"fmt"
	"math"

	"github.com/bitexact/bitexact/refimpl/blocklayout"
)

// The 128x4 swizzled block-scale layout (refimpl/blocklayout.Swizzle128x4) read by Blackwell block-scaled
// tensor-core GEMMs (vLLM, torchao to_blocked and CUTLASS agree; see
// docs/rationale/blocks.md). The [rows, sfCols] scale matrix is padded to
// rows a multiple of 128 and sfCols a multiple of 4 with zero codes, cut
// into 128x4 tiles stored tile-row-major (all tiles of rows 0..127 first),
// and each 512-byte tile holds row m at byte (m%32)*16 + ((m/32)%4)*4 and
// column k at byte k%4 of that word.

// SwizzleOffset is the byte offset of scale (m, k) in the swizzled layout of
// a matrix with sfCols scale columns:
//
//	((m/128)*ceil(sfCols/4) + k/4)*512 + (m%32)*16 + ((m/32)%4)*4 + k%4
func SwizzleOffset(m, k, sfCols int) int {
	return blocklayout.Swizzle128x4.Offset(m, k, sfCols)
}

// SwizzledLen is the byte length of the swizzled layout of a [rows, sfCols]
// scale matrix: rows rounded up to 128 times sfCols rounded up to 4.
func SwizzledLen(rows, sfCols int) int {
	return blocklayout.Swizzle128x4.Len(rows, sfCols)
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

func checkScaleShape(rows, sfCols int) error {
	if rows < 0 || sfCols < 0 {
		return fmt.Errorf("nvfp4: negative scale shape [%d, %d]", rows, sfCols)
	}
	if rows > math.MaxInt/2-128 || sfCols > math.MaxInt/2-4 ||
		sfCols != 0 && roundUp(rows, 128) > math.MaxInt/roundUp(sfCols, 4) {
		return fmt.Errorf("nvfp4: scale shape [%d, %d] overflows", rows, sfCols)
	}
	return nil
}

// Swizzle rearranges a row-major [rows, sfCols] scale matrix into the 128x4
// layout, padding with zero codes.
func Swizzle(scales []uint8, rows, sfCols int) ([]uint8, error) {
	if err := checkScaleShape(rows, sfCols); err != nil {
		return nil, err
	}
	if len(scales) != rows*sfCols {
		return nil, fmt.Errorf("nvfp4: %d scales do not fill shape [%d, %d]", len(scales), rows, sfCols)
	}
	out := make([]uint8, SwizzledLen(rows, sfCols))
	for m := 0; m < rows; m++ {
		for k := 0; k < sfCols; k++ {
			out[SwizzleOffset(m, k, sfCols)] = scales[m*sfCols+k]
		}
	}
	return out, nil
}

// Unswizzle is the inverse of Swizzle: it reads the [rows, sfCols] scales
// back out of a swizzled buffer of exactly SwizzledLen(rows, sfCols) bytes.
// Padding bytes are not read.
func Unswizzle(swizzled []uint8, rows, sfCols int) ([]uint8, error) {
	if err := checkScaleShape(rows, sfCols); err != nil {
		return nil, err
	}
	if want := SwizzledLen(rows, sfCols); len(swizzled) != want {
		return nil, fmt.Errorf("nvfp4: swizzled scales have %d bytes, want %d for [%d, %d] padded to [%d, %d]",
			len(swizzled), want, rows, sfCols, roundUp(rows, 128), roundUp(sfCols, 4))
	}
	out := make([]uint8, rows*sfCols)
	for m := 0; m < rows; m++ {
		for k := 0; k < sfCols; k++ {
			out[m*sfCols+k] = swizzled[SwizzleOffset(m, k, sfCols)]
		}
	}
	return out, nil
}
