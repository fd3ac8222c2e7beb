package sparse24

import "fmt"

// The CUTLASS sparse GEMM reads metadata in a reordered layout
// (tools/util/include/cutlass/util/host_reorder.h reorder_meta, with the
// ColumnMajorInterleaved<2> store), which PyTorch reproduces in
// torch/sparse/_semi_structured_conversions.py. Logical metadata is
// [rows][cols] elements of 16 bits (dense fp16/bf16; 4 group nibbles each)
// or 32 bits (dense int8; 8 nibbles), nibble j of element (r, c) covering
// group c*Q + j of row r. Element (r, c) goes to offset
//
//	r'  = (r/Gr)*Gr + (r%8)*I + (r%Gr)/8       Gr, I = 32, 4 (16-bit) or 16, 2 (32-bit)
//	tr  = r' even and c odd;  bl = r' odd and c even
//	r'' = r' + tr - bl;  c'' = c - tr + bl
//	offset = (c''/2)*rows*2 + r''*2 + c''%2
//
// of the reordered array. rows must be a multiple of Gr (PyTorch checks 32
// for 16-bit and 16 for 32-bit metadata) and cols even (the 2x2 swizzle
// pairs columns).

// MetaReorder is the CUTLASS reordered layout of one metadata width as
// data: the row grouping Gr and interleave I of the formula above, and
// whether the 2x2 swap (tr, bl) applies. Meta16 and Meta32 are the two
// layouts CUTLASS has; the diagnosis and the mutant catalogue build the
// layout's faults (swap left out, the other width's grouping) from them
// with one field changed, so that the formula is written once.
type MetaReorder struct {
	Group, Interweave int
	Swap              bool
}

// The reordered layouts of 16-bit (dense fp16/bf16) and 32-bit (dense
// int8) metadata.
var (
	Meta16 = MetaReorder{Group: 32, Interweave: 4, Swap: true}
	Meta32 = MetaReorder{Group: 16, Interweave: 2, Swap: true}
)

// Offset is the offset of logical element (r, c) of metadata with rows
// rows in the layout.
func (l MetaReorder) Offset(r, c, rows int) int {
	rr := r/l.Group*l.Group + (r%8)*l.Interweave + (r%l.Group)/8
	cc := c
	if l.Swap {
		tr, bl := 0, 0
		if rr%2 == 0 && c%2 == 1 {
			tr = 1
		}
		if rr%2 == 1 && c%2 == 0 {
			bl = 1
		}
		rr += tr - bl
		cc = c - tr + bl
	}
	return (cc/2)*rows*2 + rr*2 + cc%2
}

func checkMeta(n, rows, cols, group int) error {
	if rows <= 0 || cols <= 0 {
		return fmt.Errorf("sparse24: metadata [%d][%d]: sizes must be positive", rows, cols)
	}
	if rows%group != 0 {
		return fmt.Errorf("sparse24: metadata rows %d are not a multiple of %d", rows, group)
	}
	if cols%2 != 0 {
		return fmt.Errorf("sparse24: metadata columns %d are not even", cols)
	}
	if n != rows*cols {
		return fmt.Errorf("sparse24: metadata has %d elements, want %d x %d", n, rows, cols)
	}
	return nil
}

func reorder[T uint16 | uint32](meta []T, rows, cols int, l MetaReorder, inverse bool) ([]T, error) {
	if err := checkMeta(len(meta), rows, cols, l.Group); err != nil {
		return nil, err
	}
	out := make([]T, len(meta))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			o := l.Offset(r, c, rows)
			if inverse {
				out[r*cols+c] = meta[o]
			} else {
				out[o] = meta[r*cols+c]
			}
		}
	}
	return out, nil
}

// ReorderMeta16 reorders logical 16-bit metadata [rows][cols] (dense fp16
// or bf16 operand) into CUTLASS's layout.
func ReorderMeta16(meta []uint16, rows, cols int) ([]uint16, error) {
	return reorder(meta, rows, cols, Meta16, false)
}

// UnreorderMeta16 inverts ReorderMeta16.
func UnreorderMeta16(meta []uint16, rows, cols int) ([]uint16, error) {
	return reorder(meta, rows, cols, Meta16, true)
}

// ReorderMeta32 reorders logical 32-bit metadata [rows][cols] (dense int8
// operand) into CUTLASS's layout.
func ReorderMeta32(meta []uint32, rows, cols int) ([]uint32, error) {
	return reorder(meta, rows, cols, Meta32, false)
}

// UnreorderMeta32 inverts ReorderMeta32.
func UnreorderMeta32(meta []uint32, rows, cols int) ([]uint32, error) {
	return reorder(meta, rows, cols, Meta32, true)
}

// MetaTo16 regroups row-major seed metadata bytes [N][K/8] (two group
// nibbles per byte) into logical 16-bit elements [N][K/16], element c
// holding groups 4c..4c+3 in nibbles 0..3: the little-endian reading of
// the bytes. K must be a multiple of 16.
func MetaTo16(meta []uint8, N, K int) ([]uint16, error) {
	if err := checkMetaBytes(len(meta), N, K, 16); err != nil {
		return nil, err
	}
	out := make([]uint16, len(meta)/2)
	for i := range out {
		out[i] = uint16(meta[2*i]) | uint16(meta[2*i+1])<<8
	}
	return out, nil
}

// MetaFrom16 inverts MetaTo16.
func MetaFrom16(meta []uint16, N, K int) ([]uint8, error) {
	if err := checkMetaBytes(2*len(meta), N, K, 16); err != nil {
		return nil, err
	}
	out := make([]uint8, 2*len(meta))
	for i, v := range meta {
		out[2*i], out[2*i+1] = uint8(v), uint8(v>>8)
	}
	return out, nil
}

// MetaTo32 regroups seed metadata bytes [N][K/8] into logical 32-bit
// elements [N][K/32] (8 group nibbles each, little-endian). K must be a
// multiple of 32.
func MetaTo32(meta []uint8, N, K int) ([]uint32, error) {
	if err := checkMetaBytes(len(meta), N, K, 32); err != nil {
		return nil, err
	}
	out := make([]uint32, len(meta)/4)
	for i := range out {
		out[i] = uint32(meta[4*i]) | uint32(meta[4*i+1])<<8 | uint32(meta[4*i+2])<<16 | uint32(meta[4*i+3])<<24
	}
	return out, nil
}

// MetaFrom32 inverts MetaTo32.
func MetaFrom32(meta []uint32, N, K int) ([]uint8, error) {
	if err := checkMetaBytes(4*len(meta), N, K, 32); err != nil {
		return nil, err
	}
	out := make([]uint8, 4*len(meta))
	for i, v := range meta {
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = uint8(v), uint8(v>>8), uint8(v>>16), uint8(v>>24)
	}
	return out, nil
}

func checkMetaBytes(n, N, K, kmult int) error {
	if N <= 0 || K <= 0 {
		return fmt.Errorf("sparse24: N=%d and K=%d must be positive", N, K)
	}
	if K%kmult != 0 {
		return fmt.Errorf("sparse24: K=%d is not a multiple of %d", K, kmult)
	}
	if n != N*K/8 {
		return fmt.Errorf("sparse24: metadata has %d bytes, want N*K/8 = %d", n, N*K/8)
	}
	return nil
}
