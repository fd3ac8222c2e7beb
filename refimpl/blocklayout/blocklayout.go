// Package blocklayout places the [rows, cols] matrix of a block format's
// scales in memory: row-major (linear), or in the tiled layouts that
// block-scaled tensor-core GEMMs read. A tiled layout pads rows to a
// multiple of its tile's rows and cols to a multiple of 4 with zero
// bytes, stores tiles tile-row-major (every tile of the first tile row
// first), and inside a tile interleaves rows in stripes:
//
//	offset(m, k) = ((m/R)*ceil(cols/4) + k/4)*(R*4)
//	             + (m%R%S)*(R/S*4) + (m%R/S)*4 + k%4
//
// with R the tile's rows and S its stripe. The 128x4 layout (R=128, S=32)
// is NVIDIA's for NVFP4 and MX scales (CUTLASS, cuBLAS, vLLM, torchao
// to_blocked); FlashInfer's 8x4 (R=8, S=8) is the same without the
// stripes. The layouts are data; one Offset serves all of them.
package blocklayout

import (
	"fmt"
	"math"
)

// Layout is one placement of a [rows, cols] scale matrix.
type Layout struct {
	Name string
	// Summary says in one line how the layout places a scale.
	Summary string
	// Source names the implementations that read or write the layout.
	Source string
	// TileRows (R) and Stripe (S) describe a tiled layout; TileRows 0 is
	// row-major with no padding.
	TileRows, Stripe int
}

// The layouts.
var (
	// Linear is row-major [rows, cols], no padding: scale (m, k) at
	// m*cols + k. A flat 1-D scale tensor in this order (FlashInfer's
	// mxfp8_quantize with layout_linear) has the same bytes.
	Linear = Layout{Name: "linear", Summary: "row-major [rows, cols], no padding",
		Source: "OCP MX v1.0 (one scale per block, in block order); torchao to_mx; FlashInfer SfLayout.layout_linear"}
	// Swizzle128x4 is the 128x4 tensor-core layout (R=128, S=32): row m at
	// byte (m%32)*16 + ((m/32)%4)*4 of its 512-byte tile.
	Swizzle128x4 = Layout{Name: "128x4", Summary: "128x4 tiles, rows in 4 stripes of 32 (tensor-core block-scale layout)",
		Source:   "NVIDIA cuBLAS/CUTLASS block-scaled GEMM scale layout; torchao to_blocked; vLLM; FlashInfer SfLayout.layout_128x4",
		TileRows: 128, Stripe: 32}
	// Swizzle8x4 is FlashInfer's 8x4 layout (R=8, S=8): 32-byte tiles,
	// row-major inside a tile.
	Swizzle8x4 = Layout{Name: "8x4", Summary: "8x4 tiles of 32 bytes, row-major inside a tile (FlashInfer layout_8x4)",
		Source:   "flashinfer-ai/flashinfer SfLayout.layout_8x4 (_compute_swizzled_layout_sf_size(m, k/32, 8); offset (m/8)*(nKt*32) + (k/4)*32 + (m%8)*4 + k%4)",
		TileRows: 8, Stripe: 8}
)

// Layouts lists the layouts.
func Layouts() []Layout { return []Layout{Linear, Swizzle128x4, Swizzle8x4} }

// Lookup returns the layout with the given name.
func Lookup(name string) (Layout, error) {
	for _, l := range Layouts() {
		if l.Name == name {
			return l, nil
		}
	}
	return Layout{}, fmt.Errorf("blocklayout: unknown layout %q (known: linear, 128x4, 8x4)", name)
}

// tileCols is the width of every tiled layout's tile.
const tileCols = 4

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// PaddedShape is the [rows, cols] the layout stores: rows rounded up to
// TileRows and cols to 4 for a tiled layout, unchanged for Linear.
func (l Layout) PaddedShape(rows, cols int) (int, int) {
	if l.TileRows == 0 {
		return rows, cols
	}
	return roundUp(rows, l.TileRows), roundUp(cols, tileCols)
}

// Len is the layout's byte length for a [rows, cols] scale matrix.
func (l Layout) Len(rows, cols int) int {
	r, c := l.PaddedShape(rows, cols)
	return r * c
}

// Offset is the byte offset of scale (m, k) of a matrix with cols scale
// columns.
func (l Layout) Offset(m, k, cols int) int {
	if l.TileRows == 0 {
		return m*cols + k
	}
	r, s := l.TileRows, l.Stripe
	nKt := (cols + tileCols - 1) / tileCols
	in := m % r
	return ((m/r)*nKt+k/tileCols)*(r*tileCols) + (in%s)*(r/s*tileCols) + (in/s)*tileCols + k%tileCols
}

func (l Layout) check(rows, cols int) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("blocklayout: negative scale shape [%d, %d]", rows, cols)
	}
	if rows > math.MaxInt/2-256 || cols > math.MaxInt/2-4 {
		return fmt.Errorf("blocklayout: scale shape [%d, %d] overflows", rows, cols)
	}
	if r, c := l.PaddedShape(rows, cols); c != 0 && r > math.MaxInt/c {
		return fmt.Errorf("blocklayout: scale shape [%d, %d] overflows", rows, cols)
	}
	return nil
}

// Place writes a row-major [rows, cols] scale matrix in layout l, padding
// with zero bytes.
func (l Layout) Place(scales []uint8, rows, cols int) ([]uint8, error) {
	if err := l.check(rows, cols); err != nil {
		return nil, err
	}
	if len(scales) != rows*cols {
		return nil, fmt.Errorf("blocklayout: %d scales do not fill shape [%d, %d]", len(scales), rows, cols)
	}
	out := make([]uint8, l.Len(rows, cols))
	for m := 0; m < rows; m++ {
		for k := 0; k < cols; k++ {
			out[l.Offset(m, k, cols)] = scales[m*cols+k]
		}
	}
	return out, nil
}

// Read is the inverse of Place: it reads the row-major [rows, cols]
// scales back out of a buffer of exactly Len(rows, cols) bytes. Padding
// bytes are not read.
func (l Layout) Read(placed []uint8, rows, cols int) ([]uint8, error) {
	if err := l.check(rows, cols); err != nil {
		return nil, err
	}
	if want := l.Len(rows, cols); len(placed) != want {
		pr, pc := l.PaddedShape(rows, cols)
		return nil, fmt.Errorf("blocklayout: %s scales have %d bytes, want %d for [%d, %d] padded to [%d, %d]",
			l.Name, len(placed), want, rows, cols, pr, pc)
	}
	out := make([]uint8, rows*cols)
	for m := 0; m < rows; m++ {
		for k := 0; k < cols; k++ {
			out[m*cols+k] = placed[l.Offset(m, k, cols)]
		}
	}
	return out, nil
}
