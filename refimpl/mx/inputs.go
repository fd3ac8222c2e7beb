package mx

import "math"

// Inputs that find scale-layout bugs. Random data hides a misplaced scale
// when neighbouring blocks share an exponent (flashinfer-ai/flashinfer
// #4087 skipped the 128x4 interleave unnoticed because random weights gave
// equal exponents); these give every block its own power-of-two band.

// BandSpan is the number of distinct power-of-two bands the adversarial
// class draws from: block amaxes lie in [2^-30, 2^31), far inside every
// element type's scale range.
const BandSpan = 61

// Band is the power-of-two band of the block at block row br and block
// column bc of an adversarial matrix with the given seed: a hash of the
// block's position, so that any two blocks a layout or axis mistake can
// confuse have different bands (and so different E8M0 scales) with
// probability 1 - 1/BandSpan, whatever the mistake.
func Band(seed uint64, br, bc int) int {
	h := splitmix(seed ^ uint64(br)*0x9e3779b97f4a7c15 ^ uint64(bc)*0xc2b2ae3d27d4eb4f)
	return int(h%BandSpan) - 30
}

// AdversarialBands returns a row-major [rows, cols] float32 matrix whose
// 32-element blocks along dim each lie in their own power-of-two band:
// block (br, bc) has every element of magnitude below 2^(Band+1), one
// element (at a position that varies per block) at ±2^Band times a
// mantissa in [1, 2), and the rest uniform in (-2^Band, 2^Band). For Dim0
// the blocks are 32 columns of a row (rows any, cols a multiple of 32);
// for Dim1, 32 rows of a column (rows a multiple of 32). The other
// axis's blocks then mix bands, so dim0 and dim1 scales differ too.
func AdversarialBands(rows, cols int, dim Dim, seed uint64) []float32 {
	x := make([]float32, rows*cols)
	s := seed
	next := func() uint64 { s = splitmix(s); return s }
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			br, bc := r, c/BlockSize
			if dim == Dim1 {
				br, bc = r/BlockSize, c
			}
			band := Band(seed, br, bc)
			u := float64(next()>>11) / (1 << 53) // [0, 1)
			v := math.Ldexp(2*u-1, band)         // (-2^band, 2^band)
			x[r*cols+c] = float32(v)
		}
	}
	// The block's maximum: one element at ±(1+f)*2^band.
	for br := 0; br < rows; br++ {
		for bc := 0; bc < cols; bc++ {
			var r, c int
			switch dim {
			case Dim0:
				if bc >= cols/BlockSize {
					continue
				}
				r, c = br, bc*BlockSize+int(next()%BlockSize)
			default:
				if br >= rows/BlockSize {
					continue
				}
				r, c = br*BlockSize+int(next()%BlockSize), bc
			}
			m := 1 + float64(next()>>11)/(1<<53)
			v := float32(math.Ldexp(m, Band(seed, br, bc)))
			if next()&1 == 1 {
				v = -v
			}
			x[r*cols+c] = v
		}
	}
	return x
}

// LayoutShapes are matrix shapes larger than one 128x4 scale tile in each
// direction and aligned to neither: rows not a multiple of 128 (nor of 8
// for the 8x4 tile where noted) and K/32 scale columns not a multiple of
// 4. Rows are multiples of 32 so that Dim1 applies to each.
func LayoutShapes() [][2]int {
	return [][2]int{
		{160, 288}, // 5 row stripes, 9 scale columns: 2 tile rows, 3 tile columns
		{288, 416}, // 13 scale columns
		{224, 160}, // 5 scale columns; dim1: 7 scale columns, 160 scale rows
	}
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
