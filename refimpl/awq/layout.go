package awq

import "fmt"

// Packing says how a logical nibble matrix becomes int32 words.
type Packing struct {
	// Transpose packs the transpose ([OC][IC] for a weight) of the logical
	// matrix rather than the matrix itself.
	Transpose bool
	// AlongRows puts eight consecutive rows of the (possibly transposed)
	// matrix into one word, giving [rows/8][cols] words (GPTQ qweight);
	// otherwise eight consecutive columns share a word, giving
	// [rows][cols/8] words.
	AlongRows bool
	// Order: nibble p (bits 4p..4p+3) of a word holds element base+Order[p].
	Order [8]int
	// Ragged allows a column count that is not a multiple of 8: the last
	// word of a row is completed with zero nibbles (compressed-tensors'
	// ceil(IC/8)). Only with AlongRows false.
	Ragged bool
}

// Nibble orders.
var (
	// OrderAWQ is AutoAWQ's order_map [0,2,4,6,1,3,5,7]: column 8j+ORDER[p]
	// sits at nibble p, i.e. column n at nibble (n%2)*4 + (n%8)/2.
	OrderAWQ = [8]int{0, 2, 4, 6, 1, 3, 5, 7}
	// OrderSequential puts element base+p at nibble p.
	OrderSequential = [8]int{0, 1, 2, 3, 4, 5, 6, 7}
)

// ZeroStorage says how zero points are stored.
type ZeroStorage struct {
	// Stored is false when the format has no zero-point tensor: every zero
	// point must then be 8 (the implicit uint4b8 offset).
	Stored  bool
	Packing Packing
	// Offset is added to z before storing (GPTQ v1 stores z - 1).
	Offset int
	// GEMVWidth pads each row of words to AutoAWQ's calculate_zeros_width
	// (awq/modules/linear/gemv.py) with zero words.
	GEMVWidth bool
}

// Layout is a named packed format of a 4-bit weight and its zero points.
// Scales are not packed and are not part of a Layout.
type Layout struct {
	Name   string
	Source string
	// Summary says in one line what the layout does where public
	// implementations differ (diagnoses and docs show it beside the name).
	Summary string
	Weight  Packing
	Zeros   ZeroStorage
}

// The layouts. AWQ is the one vLLM's AWQ kernels read; the others are
// named so that a certificate can say which one a kernel author produced.
var (
	// AWQ: qweight int32 [IC, OC/8], qzeros int32 [IC/G, OC/8], both with
	// the [0,2,4,6,1,3,5,7] nibble order along OC.
	AWQ = Layout{Name: "awq", Summary: "AutoAWQ/vLLM GEMM layout: qweight [IC, OC/8], nibble order 0,2,4,6,1,3,5,7 along OC",
		Source: "casper-hansen/AutoAWQ:awq/modules/linear/gemm.py from_linear; vllm csrc/quantization/awq/gemm_kernels.cu",
		Weight: Packing{Order: OrderAWQ},
		Zeros:  ZeroStorage{Stored: true, Packing: Packing{Order: OrderAWQ}}}
	// AWQGEMV: qweight [OC, IC/8] sequential along IC; qzeros [OC, W]
	// sequential along groups, W = calculate_zeros_width(IC, G).
	AWQGEMV = Layout{Name: "awq-gemv", Summary: "AutoAWQ GEMV layout (transposed, sequential nibbles)",
		Source: "casper-hansen/AutoAWQ:awq/modules/linear/gemv.py from_linear",
		Weight: Packing{Transpose: true, Order: OrderSequential},
		Zeros:  ZeroStorage{Stored: true, Packing: Packing{Transpose: true, Order: OrderSequential, Ragged: true}, GEMVWidth: true}}
	// GPTQv1: qweight [IC/8, OC] sequential along IC; qzeros [IC/G, OC/8]
	// sequential along OC storing z - 1.
	GPTQv1 = Layout{Name: "gptq-v1", Summary: "GPTQ layout storing zero points minus one",
		Source: "AutoGPTQ/GPTQModel QuantLinear.pack (checkpoint_format gptq)",
		Weight: Packing{AlongRows: true, Order: OrderSequential},
		Zeros:  ZeroStorage{Stored: true, Packing: Packing{Order: OrderSequential}, Offset: -1}}
	// GPTQv2: as GPTQv1 with z stored as is.
	GPTQv2 = Layout{Name: "gptq-v2", Summary: "GPTQ layout (sequential nibbles along IC)",
		Source: "GPTQModel checkpoint_format gptq_v2",
		Weight: Packing{AlongRows: true, Order: OrderSequential},
		Zeros:  ZeroStorage{Stored: true, Packing: Packing{Order: OrderSequential}}}
	// CompressedTensors: weight_packed [OC, ceil(IC/8)] sequential along IC,
	// zero-padded; no zero points (u = q + 8).
	CompressedTensors = Layout{Name: "compressed-tensors", Summary: "compressed-tensors pack_to_int32: [OC, IC/8] sequential along IC, no zero points (u = q + 8)",
		Source: "neuralmagic/compressed-tensors pack_to_int32",
		Weight: Packing{Transpose: true, Order: OrderSequential, Ragged: true}}
)

// Layouts lists the named layouts, canonical first.
func Layouts() []Layout {
	return []Layout{AWQ, AWQGEMV, GPTQv1, GPTQv2, CompressedTensors}
}

// LayoutByName finds a layout.
func LayoutByName(name string) (Layout, error) {
	for _, l := range Layouts() {
		if l.Name == name {
			return l, nil
		}
	}
	return Layout{}, fmt.Errorf("awq: unknown layout %q (known: awq, awq-gemv, gptq-v1, gptq-v2, compressed-tensors)", name)
}

// shape returns the word shape that p gives a [rows][cols] matrix.
func (p Packing) shape(rows, cols int) (int, int, error) {
	if p.Transpose {
		rows, cols = cols, rows
	}
	if p.AlongRows {
		if rows%8 != 0 {
			return 0, 0, fmt.Errorf("packing along %d rows needs a multiple of 8", rows)
		}
		return rows / 8, cols, nil
	}
	if cols%8 != 0 && !p.Ragged {
		return 0, 0, fmt.Errorf("packing %d columns needs a multiple of 8", cols)
	}
	return rows, (cols + 7) / 8, nil
}

// pack packs x, [rows][cols] nibbles, into words of width wordsPerRow
// (at least the natural width; extra words are zero).
func (p Packing) pack(x []uint8, rows, cols, wordsPerRow int) []int32 {
	// Element (i, j) of the packed view is x[i*rs + j*cs].
	r, c, rs, cs := rows, cols, cols, 1
	if p.Transpose {
		r, c, rs, cs = cols, rows, 1, cols
	}
	if p.AlongRows {
		out := make([]int32, r/8*c)
		for i := 0; i < r/8; i++ {
			for j := 0; j < c; j++ {
				var w uint32
				for n, e := range p.Order {
					w |= uint32(x[(8*i+e)*rs+j*cs]) << (4 * n)
				}
				out[i*c+j] = int32(w)
			}
		}
		return out
	}
	out := make([]int32, r*wordsPerRow)
	for i := 0; i < r; i++ {
		for j := 0; 8*j < c; j++ {
			var w uint32
			for n, e := range p.Order {
				if 8*j+e < c {
					w |= uint32(x[i*rs+(8*j+e)*cs]) << (4 * n)
				}
			}
			out[i*wordsPerRow+j] = int32(w)
		}
	}
	return out
}

// unpack inverts pack; nibbles outside the matrix must be zero.
func (p Packing) unpack(words []int32, rows, cols, wordsPerRow int) ([]uint8, error) {
	x := make([]uint8, rows*cols)
	r, c, rs, cs := rows, cols, cols, 1
	if p.Transpose {
		r, c, rs, cs = cols, rows, 1, cols
	}
	if p.AlongRows {
		for i := 0; i < r/8; i++ {
			for j := 0; j < c; j++ {
				w := uint32(words[i*c+j])
				for n, e := range p.Order {
					x[(8*i+e)*rs+j*cs] = uint8(w>>(4*n)) & 0xF
				}
			}
		}
		return x, nil
	}
	for i := 0; i < r; i++ {
		for j := 0; j < wordsPerRow; j++ {
			w := uint32(words[i*wordsPerRow+j])
			for n, e := range p.Order {
				v := uint8(w>>(4*n)) & 0xF
				if 8*j+e < c {
					x[i*rs+(8*j+e)*cs] = v
				} else if v != 0 {
					return nil, fmt.Errorf("padding nibble %d of word [%d,%d] is %#x, want 0", n, i, j, v)
				}
			}
		}
	}
	return x, nil
}

// WeightShape is the shape of the packed weight of a [IC][OC] matrix.
func (l Layout) WeightShape(IC, OC int) ([]int, error) {
	if IC <= 0 || OC <= 0 {
		return nil, fmt.Errorf("awq: layout %s: IC=%d and OC=%d must be positive", l.Name, IC, OC)
	}
	a, b, err := l.Weight.shape(IC, OC)
	if err != nil {
		return nil, fmt.Errorf("awq: layout %s: qweight of [IC=%d, OC=%d]: %w", l.Name, IC, OC, err)
	}
	return []int{a, b}, nil
}

// ZerosShape is the shape of the packed zero points, nil for a layout
// without stored zero points.
func (l Layout) ZerosShape(IC, OC, G int) ([]int, error) {
	if G <= 0 || IC <= 0 || IC%G != 0 {
		return nil, fmt.Errorf("awq: layout %s: IC=%d is not a multiple of the group size %d", l.Name, IC, G)
	}
	if !l.Zeros.Stored {
		return nil, nil
	}
	a, b, err := l.Zeros.Packing.shape(IC/G, OC)
	if err != nil {
		return nil, fmt.Errorf("awq: layout %s: qzeros of [IC/G=%d, OC=%d]: %w", l.Name, IC/G, OC, err)
	}
	if l.Zeros.GEMVWidth {
		w, err := gemvZerosWidth(IC, G)
		if err != nil {
			return nil, fmt.Errorf("awq: layout %s: %w", l.Name, err)
		}
		b = w
	}
	return []int{a, b}, nil
}

// gemvZerosWidth is AutoAWQ's calculate_zeros_width: ceil(groups/8)
// rounded up to a multiple of 1, 2 or 4 words for G >= 128, 64, 32.
func gemvZerosWidth(IC, G int) (int, error) {
	var mult int
	switch {
	case G >= 128:
		mult = 1
	case G == 64:
		mult = 2
	case G == 32:
		mult = 4
	default:
		return 0, fmt.Errorf("group size %d not supported by awq-gemv (32, 64 or >= 128)", G)
	}
	base := (IC/G + 7) / 8
	return (base + mult - 1) / mult * mult, nil
}

func checkNibbles(name string, x []uint8) error {
	for i, v := range x {
		if v > 15 {
			return fmt.Errorf("awq: %s element %d is %d, not a 4-bit value", name, i, v)
		}
	}
	return nil
}

// PackWeight packs q, the stored nibbles [IC][OC] row-major (each in
// [0, 15]), into l's qweight.
func (l Layout) PackWeight(q []uint8, IC, OC int) ([]int32, []int, error) {
	shape, err := l.WeightShape(IC, OC)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLen("q", len(q), IC*OC); err != nil {
		return nil, nil, err
	}
	if err := checkNibbles("q", q); err != nil {
		return nil, nil, err
	}
	return l.Weight.pack(q, IC, OC, shape[1]), shape, nil
}

// UnpackWeight inverts PackWeight.
func (l Layout) UnpackWeight(qweight []int32, IC, OC int) ([]uint8, error) {
	shape, err := l.WeightShape(IC, OC)
	if err != nil {
		return nil, err
	}
	if err := checkLen("qweight", len(qweight), shape[0]*shape[1]); err != nil {
		return nil, err
	}
	q, err := l.Weight.unpack(qweight, IC, OC, shape[1])
	if err != nil {
		return nil, fmt.Errorf("awq: layout %s: qweight: %w", l.Name, err)
	}
	return q, nil
}

// PackZeros packs z, [IC/G][OC] zero points in [0, 15], into l's qzeros.
// A layout without stored zero points accepts only z = 8 everywhere and
// returns nil. GPTQ v1 cannot store z = 0 (z - 1 underflows) and errs.
func (l Layout) PackZeros(z []uint8, IC, OC, G int) ([]int32, []int, error) {
	shape, err := l.ZerosShape(IC, OC, G)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLen("zeros", len(z), IC/G*OC); err != nil {
		return nil, nil, err
	}
	if err := checkNibbles("zeros", z); err != nil {
		return nil, nil, err
	}
	if !l.Zeros.Stored {
		for i, v := range z {
			if v != 8 {
				return nil, nil, fmt.Errorf("awq: layout %s stores no zero points (implicit 8), zero %d is %d", l.Name, i, v)
			}
		}
		return nil, nil, nil
	}
	stored := z
	if l.Zeros.Offset != 0 {
		stored = make([]uint8, len(z))
		for i, v := range z {
			s := int(v) + l.Zeros.Offset
			if s < 0 || s > 15 {
				return nil, nil, fmt.Errorf("awq: layout %s cannot store zero point %d (element %d)", l.Name, v, i)
			}
			stored[i] = uint8(s)
		}
	}
	return l.Zeros.Packing.pack(stored, IC/G, OC, shape[1]), shape, nil
}

// UnpackZeros inverts PackZeros (z = stored - Offset, so GPTQ v1's stored
// 15 reads back as 16). A layout without stored zero points returns 8s.
func (l Layout) UnpackZeros(qzeros []int32, IC, OC, G int) ([]uint8, error) {
	shape, err := l.ZerosShape(IC, OC, G)
	if err != nil {
		return nil, err
	}
	if !l.Zeros.Stored {
		z := make([]uint8, IC/G*OC)
		for i := range z {
			z[i] = 8
		}
		return z, nil
	}
	if err := checkLen("qzeros", len(qzeros), shape[0]*shape[1]); err != nil {
		return nil, err
	}
	z, err := l.Zeros.Packing.unpack(qzeros, IC/G, OC, shape[1])
	if err != nil {
		return nil, fmt.Errorf("awq: layout %s: qzeros: %w", l.Name, err)
	}
	for i := range z {
		z[i] = uint8(int(z[i]) - l.Zeros.Offset)
	}
	return z, nil
}
