package sparse24

import "fmt"

// Layout is the memory order of compressed values, metadata and scales.
type Layout int

const (
	// RowMajor is the dgx-vllm v1 layout: comp [N][K/4], meta [N][K/8],
	// scales [N][K/S].
	RowMajor Layout = iota + 1
	// Transposed is the coalesced layout the v2+ kernels read: comp
	// [K/4][N], meta [K/8][N], scales [K/S][N].
	Transposed
)

// String is the layout's name.
func (l Layout) String() string {
	switch l {
	case RowMajor:
		return "rowmajor"
	case Transposed:
		return "transposed"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// LayoutByName finds a layout: "rowmajor" or "transposed".
func LayoutByName(name string) (Layout, error) {
	for _, l := range []Layout{RowMajor, Transposed} {
		if l.String() == name {
			return l, nil
		}
	}
	return 0, fmt.Errorf("sparse24: unknown layout %q (known: rowmajor, transposed)", name)
}

func checkENK(E, N, K int) error {
	if E <= 0 || N <= 0 || K <= 0 {
		return fmt.Errorf("sparse24: E=%d, N=%d and K=%d must be positive", E, N, K)
	}
	if K%8 != 0 {
		return fmt.Errorf("sparse24: K=%d is not a multiple of 8 (one metadata byte covers 8 values)", K)
	}
	return nil
}

// Compress selects 2 of every 4 codes of E matrices [N][K] (codes is
// [E][N][K]) with rule and stores, per expert:
//
//	comp[n][t] = v(i0) | v(i1)<<4          group t = 4t..4t+3, [N][K/4]
//	meta[n][p] = m(2p) | m(2p+1)<<4        m(t) = i0 | i1<<2,  [N][K/8]
//
// (the layout of Avarok-Cybersecurity/dgx-vllm sparse_fp4_kernel/; see
// docs/rationale/awq-sparse24.md), transposed per expert to
// [K/4][N] and [K/8][N] in the Transposed layout. K must be a multiple
// of 8.
func Compress(codes []uint8, E, N, K int, rule TieRule, layout Layout) (comp, meta []uint8, err error) {
	if err := checkENK(E, N, K); err != nil {
		return nil, nil, err
	}
	if len(codes) != E*N*K {
		return nil, nil, fmt.Errorf("sparse24: codes have %d elements, want E*N*K = %d", len(codes), E*N*K)
	}
	if err := checkCodes(codes); err != nil {
		return nil, nil, err
	}
	if layout != RowMajor && layout != Transposed {
		return nil, nil, fmt.Errorf("sparse24: unknown layout %v", layout)
	}
	if err := rule.check(); err != nil {
		return nil, nil, err
	}
	tab := rule.table()
	comp = make([]uint8, E*N*K/4)
	meta = make([]uint8, E*N*K/8)
	for t := 0; t < E*N*K/4; t++ {
		g := codes[4*t : 4*t+4]
		m := selectFast(tab, g)
		comp[t] = g[m&3] | g[m>>2]<<4
		meta[t/2] |= m << (4 * (t & 1))
	}
	if layout == Transposed {
		comp, _ = Transpose(comp, E, N, K/4)
		meta, _ = Transpose(meta, E, N, K/8)
	}
	return comp, meta, nil
}

// Decompress inverts Compress: it returns codes [E][N][K] with each kept
// value at its metadata position and code 0 (+0) elsewhere. A metadata
// nibble naming one position twice is an error; a descending pair is
// placed as named (the hardware accepts it; Compress never writes one).
func Decompress(comp, meta []uint8, E, N, K int, layout Layout) ([]uint8, error) {
	if err := checkENK(E, N, K); err != nil {
		return nil, err
	}
	if len(comp) != E*N*K/4 {
		return nil, fmt.Errorf("sparse24: comp has %d bytes, want E*N*K/4 = %d", len(comp), E*N*K/4)
	}
	if len(meta) != E*N*K/8 {
		return nil, fmt.Errorf("sparse24: meta has %d bytes, want E*N*K/8 = %d", len(meta), E*N*K/8)
	}
	switch layout {
	case RowMajor:
	case Transposed:
		comp, _ = Transpose(comp, E, K/4, N)
		meta, _ = Transpose(meta, E, K/8, N)
	default:
		return nil, fmt.Errorf("sparse24: unknown layout %v", layout)
	}
	codes := make([]uint8, E*N*K)
	for t := 0; t < E*N*K/4; t++ {
		m := meta[t/2] >> (4 * (t & 1)) & 0xF
		if !ValidMeta(m) {
			row := t / (K / 4)
			return nil, fmt.Errorf("sparse24: expert %d row %d group %d: metadata %#x names position %d twice",
				row/N, row%N, t%(K/4), m, m&3)
		}
		codes[4*t+int(m&3)] = comp[t] & 0xF
		codes[4*t+int(m>>2)] = comp[t] >> 4
	}
	return codes, nil
}

// Transpose transposes each of E matrices [rows][cols] of bytes to
// [cols][rows]: the comp_T, meta_T and scales_T layouts (scales [N][K/16]
// for NVFP4, or [N][K/8] for the per-8 variant, become [K/16][N] or
// [K/8][N]).
func Transpose(x []uint8, E, rows, cols int) ([]uint8, error) {
	if E <= 0 || rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("sparse24: transpose of %d x [%d][%d]: sizes must be positive", E, rows, cols)
	}
	if len(x) != E*rows*cols {
		return nil, fmt.Errorf("sparse24: transpose of %d x [%d][%d] needs %d bytes, have %d", E, rows, cols, E*rows*cols, len(x))
	}
	out := make([]uint8, len(x))
	for e := 0; e < E; e++ {
		src, dst := x[e*rows*cols:], out[e*rows*cols:]
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				dst[j*rows+i] = src[i*cols+j]
			}
		}
	}
	return out, nil
}
