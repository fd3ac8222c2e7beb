package sparse24

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp4"
)

// allGroups returns every group of four E2M1 codes, one after another
// (group i has code (i >> 4j) & 0xF at position j).
func allGroups() []uint8 {
	codes := make([]uint8, 4*65536)
	for i := 0; i < 65536; i++ {
		for j := 0; j < 4; j++ {
			codes[4*i+j] = uint8(i>>(4*j)) & 0xF
		}
	}
	return codes
}

// cutlassTable is the degenerate part of the encoding table in the
// comment of sparse_semi_structured_from_dense_cutlass
// (pytorch/pytorch:torch/sparse/_semi_structured_conversions.py; torch
// 2.11.0 on an H100 produced these), keyed by the nonzero mask (bit j set
// when position j is nonzero).
var cutlassTable = map[uint8]uint8{
	0b0000: 0b1110, // [F,F,F,F]
	0b1000: 0b1110, // [F,F,F,T]
	0b0100: 0b1110, // [F,F,T,F]
	0b0010: 0b1001, // [F,T,F,F]
	0b0001: 0b1000, // [T,F,F,F]
}

// holds checks the defining property of a ranked rule: every kept value
// outranks every dropped one, or ties it from a lower index.
func holds(g [4]uint8, m uint8, key func(uint8) float64) bool {
	i0, i1 := int(m&3), int(m>>2)
	for _, k := range []int{i0, i1} {
		for d := 0; d < 4; d++ {
			if d == i0 || d == i1 {
				continue
			}
			kk, kd := key(g[k]), key(g[d])
			if kk < kd || (kk == kd && k > d) {
				return false
			}
		}
	}
	return true
}

func magnitude(c uint8) float64   { return math.Abs(float64(fp4.Decode(c))) }
func signedValue(c uint8) float64 { return float64(fp4.Decode(c)) }

func TestExhaustiveGroups(t *testing.T) {
	codes := allGroups()
	const N, K = 65536 / 2, 8 // two groups per row
	for _, rule := range TieRules() {
		for _, layout := range []Layout{RowMajor, Transposed} {
			t.Run(rule.Name+"/"+layout.String(), func(t *testing.T) {
				comp, meta, err := Compress(codes, 1, N, K, rule, layout)
				if err != nil {
					t.Fatal(err)
				}
				dense, err := Decompress(comp, meta, 1, N, K, layout)
				if err != nil {
					t.Fatal(err)
				}
				rowMeta := meta
				if layout == Transposed {
					rowMeta, _ = Transpose(meta, 1, K/8, N)
				}
				for i := 0; i < 65536; i++ {
					g := [4]uint8(codes[4*i : 4*i+4])
					m := rowMeta[i/2] >> (4 * (i & 1)) & 0xF
					i0, i1 := int(m&3), int(m>>2)
					if i0 >= i1 {
						t.Fatalf("group %x: metadata %#x is not an ascending pair", g, m)
					}
					for j := 0; j < 4; j++ {
						want := g[j]
						if j != i0 && j != i1 {
							want = 0
						}
						if dense[4*i+j] != want {
							t.Fatalf("group %x: decompressed %x, want the input with positions other than %d,%d zeroed", g, dense[4*i:4*i+4], i0, i1)
						}
					}
					var ok bool
					switch rule.Name {
					case "lower-index":
						ok = holds(g, m, magnitude)
					case "signed":
						ok = holds(g, m, signedValue)
					case "cutlass":
						var mask uint8
						for j, c := range g {
							if fp4.Decode(c) != 0 {
								mask |= 1 << j
							}
						}
						if want, degenerate := cutlassTable[mask]; degenerate {
							ok = m == want
						} else {
							ok = holds(g, m, magnitude)
						}
					default:
						t.Fatalf("no property for rule %s", rule.Name)
					}
					if !ok {
						t.Fatalf("group %x: rule %s keeps %d,%d (metadata %#x)", g, rule.Name, i0, i1, m)
					}
				}
			})
		}
	}
}

func TestDegenerateGroups(t *testing.T) {
	tests := []struct {
		name  string
		group [4]uint8
		want  map[string]uint8 // rule -> metadata nibble
		src   string
	}{
		{"all zero", [4]uint8{0, 0, 0, 0},
			map[string]uint8{"lower-index": 0x4, "cutlass": 0xE, "signed": 0x4},
			"canonical (0,1); PyTorch [F,F,F,F] -> 0b1110"},
		{"-0 and +0 tie", [4]uint8{0x8, 0x0, 0x8, 0x0},
			map[string]uint8{"lower-index": 0x4, "cutlass": 0xE, "signed": 0x4},
			"|-0| = |+0| and -0 == +0; -0 != 0 is false in torch"},
		{"only position 1 nonzero", [4]uint8{0, 0x2, 0, 0},
			map[string]uint8{"lower-index": 0x4, "cutlass": 0x9, "signed": 0x4},
			"PyTorch [F,T,F,F] -> 0b1001 (1,2)"},
		{"only position 0 nonzero", [4]uint8{0x9, 0, 0, 0},
			map[string]uint8{"lower-index": 0x4, "cutlass": 0x8, "signed": 0x9},
			"PyTorch [T,F,F,F] -> 0b1000 (0,2); signed: -0.5 ranks below the zeros at 1 and 2"},
		{"only position 2 nonzero", [4]uint8{0, 0, 0x7, 0},
			map[string]uint8{"lower-index": 0x8, "cutlass": 0xE, "signed": 0x8},
			"PyTorch [F,F,T,F] -> 0b1110 (2,3)"},
		{"only position 3 nonzero", [4]uint8{0, 0, 0, 0x1},
			map[string]uint8{"lower-index": 0xC, "cutlass": 0xE, "signed": 0xC},
			"PyTorch [F,F,F,T] -> 0b1110 (2,3)"},
		{"negatives: magnitude vs signed", [4]uint8{0xF, 0x0, 0x1, 0xA},
			map[string]uint8{"lower-index": 0xC, "cutlass": 0xC, "signed": 0x9},
			"|-6| and |-1| are largest; signed keeps 0 and 0.5 at (1,2)"},
		{"equal magnitudes of both signs", [4]uint8{0x2, 0xA, 0x2, 0xA},
			map[string]uint8{"lower-index": 0x4, "cutlass": 0x4, "signed": 0x8},
			"1, -1, 1, -1: lower index wins; signed keeps both +1"},
		{"three-way tie for second", [4]uint8{0x3, 0xF, 0x3, 0xB},
			map[string]uint8{"lower-index": 0x4, "cutlass": 0x4, "signed": 0x8},
			"|-6| first; 1.5 at 0 beats 1.5 at 2 and -1.5 at 3; signed: 1.5, 1.5"},
	}
	for _, tc := range tests {
		for _, rule := range TieRules() {
			t.Run(tc.name+"/"+rule.Name, func(t *testing.T) {
				if got := rule.Select(tc.group); got != tc.want[rule.Name] {
					t.Errorf("%x: metadata %#x, want %#x (%s)", tc.group, got, tc.want[rule.Name], tc.src)
				}
			})
		}
	}
}

func TestCompressLayout(t *testing.T) {
	// Row 0: group 0 keeps 1.5@1 and 3@3, group 1 keeps 6@0 and 1@3.
	// Row 1: group 0 keeps -0.5@0 and 2@2 (4 = 2.0), group 1 all zero.
	codes := []uint8{
		0, 3, 0, 5, 7, 0, 0, 2,
		9, 0, 4, 0, 0, 0, 0, 0,
	}
	// comp = v(i0) | v(i1)<<4; meta byte = m(2p) | m(2p+1)<<4 (seed layout).
	wantComp := []uint8{0x53, 0x27, 0x49, 0x00}
	wantMeta := []uint8{0xCD, 0x48}
	comp, meta, err := Compress(codes, 1, 2, 8, LowerIndex, RowMajor)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%x %x", comp, meta) != fmt.Sprintf("%x %x", wantComp, wantMeta) {
		t.Errorf("rowmajor comp %x meta %x, want %x %x", comp, meta, wantComp, wantMeta)
	}
	compT, metaT, _ := Compress(codes, 1, 2, 8, LowerIndex, Transposed)
	// comp_T [K/4][N]: t-major, n-minor.
	if fmt.Sprintf("%x %x", compT, metaT) != "53492700 cd48" {
		t.Errorf("transposed comp %x meta %x, want 53492700 cd48", compT, metaT)
	}
	// Two experts: the second expert is the first one again.
	two := append(append([]uint8{}, codes...), codes...)
	c2, m2, _ := Compress(two, 2, 2, 8, LowerIndex, Transposed)
	if fmt.Sprintf("%x %x", c2, m2) != "5349270053492700 cd48cd48" {
		t.Errorf("batched transposed comp %x meta %x", c2, m2)
	}
	back, err := Decompress(c2, m2, 2, 2, 8, Transposed)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint8{0, 3, 0, 5, 7, 0, 0, 2, 9, 0, 4, 0, 0, 0, 0, 0}
	if fmt.Sprintf("%x", back) != fmt.Sprintf("%x%x", want, want) {
		t.Errorf("decompressed %x", back)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"K not a multiple of 8", second3(Compress(make([]uint8, 4), 1, 1, 4, LowerIndex, RowMajor)), "K=4 is not a multiple of 8"},
		{"codes length", second3(Compress(make([]uint8, 7), 1, 1, 8, LowerIndex, RowMajor)), "want E*N*K = 8"},
		{"code out of range", second3(Compress([]uint8{16, 0, 0, 0, 0, 0, 0, 0}, 1, 1, 8, LowerIndex, RowMajor)), "not a 4-bit E2M1 code"},
		{"unknown layout", second3(Compress(make([]uint8, 8), 1, 1, 8, LowerIndex, Layout(9))), "unknown layout"},
		{"metadata names one position twice", second(Decompress([]uint8{0x11, 0x11}, []uint8{0x45}, 1, 1, 8, RowMajor)), "metadata 0x5 names position 1 twice"},
		{"comp length", second(Decompress([]uint8{0x11}, []uint8{0x44}, 1, 1, 8, RowMajor)), "comp has 1 bytes"},
		{"select K", second3(Select(make([]uint8, 6), 1, 6, LowerIndex)), "K=6 is not a multiple of 4"},
		{"reorder rows", second(ReorderMeta16(make([]uint16, 16*2), 16, 2)), "rows 16 are not a multiple of 32"},
		{"reorder odd cols", second(ReorderMeta16(make([]uint16, 32), 32, 1)), "columns 1 are not even"},
		{"meta16 K", second(MetaTo16(make([]uint8, 1), 1, 8)), "K=8 is not a multiple of 16"},
		{"transpose length", second(Transpose(make([]uint8, 5), 1, 2, 3)), "needs 6 bytes"},
		{"unknown rule", second(TieRuleByName("random")), "unknown tie rule"},
		{"rule without metric", second3(Compress(make([]uint8, 8), 1, 1, 8, TieRule{Name: "x"}, RowMajor)), "unknown metric"},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error          { return err }
func second3[A, B any](_ A, _ B, err error) error { return err }

func TestSelect(t *testing.T) {
	kept, meta, err := Select([]uint8{0, 3, 0, 5, 8, 8, 0, 1}, 1, 8, CUTLASS)
	if err != nil {
		t.Fatal(err)
	}
	// group 1 = [-0, -0, 0, 0.5]: one nonzero at 3 -> PyTorch (2,3) 0xE.
	if fmt.Sprintf("%x %x", kept, meta) != "0003000500000001 0d0e" {
		t.Errorf("kept %x meta %x, want 0003000500000001 0d0e", kept, meta)
	}
}

// pytorchFromDenseOffsets is the gather pattern of
// _sparse_semi_structured_from_dense: reordered.flat[i] = meta.flat[off[i]]
// for m rows and dense width k.
func pytorchFromDenseOffsets(m, k int, int16Meta bool) []int {
	var ncols, magic0, magic1, magic2, magic3 int
	var magic4 []int
	if int16Meta {
		ncols, magic0, magic1, magic2, magic3 = k/16, 8, 64, 32, 2*k
		magic4 = []int{0, k / 2, 1, k/2 + 1, k, 3 * k / 2, k + 1, 3*k/2 + 1}
	} else {
		ncols, magic0, magic1, magic2, magic3 = k/32, 4, 32, 16, k/2
		magic4 = []int{0, k / 4, 1, k/4 + 1}
	}
	off := make([]int, m*ncols)
	for f := range off {
		tmp1 := 2 * (f / (2 * m))
		tmp2 := ((f % magic1) / magic0) * ncols
		tmp3 := ((f / magic1) % (m / magic2)) * magic3
		tmp4 := magic4[f%len(magic4)]
		off[f] = tmp1 + tmp2 + tmp3 + tmp4
	}
	return off
}

// pytorchToDenseOffsets is the gather pattern of
// _sparse_semi_structured_to_dense: meta.flat[f] = reordered.flat[off[f]].
func pytorchToDenseOffsets(m, ncols int, int16Meta bool) []int {
	magic0, magic1 := 4, []int{0, 1, 32, 33}
	if int16Meta {
		magic0, magic1 = 8, []int{0, 1, 4, 5}
	}
	off := make([]int, m*ncols)
	for r := 0; r < m; r++ {
		for c := 0; c < ncols; c++ {
			off[r*ncols+c] = []int{0, 2}[c%2] + (c/2)*2*m + (r%8)*magic0 + magic1[(r/8)%4] + (r/32)*64
		}
	}
	return off
}

func TestReorderMatchesPyTorch(t *testing.T) {
	for _, tc := range []struct{ m, k int }{{32, 128}, {32, 256}, {64, 128}, {64, 256}, {96, 512}} {
		t.Run(fmt.Sprintf("int16/m%d_k%d", tc.m, tc.k), func(t *testing.T) {
			ncols := tc.k / 16
			meta := make([]uint16, tc.m*ncols)
			for i := range meta {
				meta[i] = uint16(i)
			}
			re, err := ReorderMeta16(meta, tc.m, ncols)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range pytorchFromDenseOffsets(tc.m, tc.k, true) {
				if int(re[i]) != o {
					t.Fatalf("reordered[%d] = logical %d, PyTorch gathers %d", i, re[i], o)
				}
			}
			for f, o := range pytorchToDenseOffsets(tc.m, ncols, true) {
				if int(re[o]) != f {
					t.Fatalf("PyTorch to_dense reads logical %d from offset %d, which holds %d", f, o, re[o])
				}
			}
			back, _ := UnreorderMeta16(re, tc.m, ncols)
			for i := range back {
				if int(back[i]) != i {
					t.Fatalf("unreorder[%d] = %d", i, back[i])
				}
			}
		})
		t.Run(fmt.Sprintf("int32/m%d_k%d", tc.m, tc.k), func(t *testing.T) {
			ncols := tc.k / 32
			if ncols%2 != 0 || tc.m%32 != 0 {
				t.Skip("shape not supported")
			}
			meta := make([]uint32, tc.m*ncols)
			for i := range meta {
				meta[i] = uint32(i)
			}
			re, err := ReorderMeta32(meta, tc.m, ncols)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range pytorchFromDenseOffsets(tc.m, tc.k, false) {
				if int(re[i]) != o {
					t.Fatalf("reordered[%d] = logical %d, PyTorch gathers %d", i, re[i], o)
				}
			}
			for f, o := range pytorchToDenseOffsets(tc.m, ncols, false) {
				if int(re[o]) != f {
					t.Fatalf("PyTorch to_dense reads logical %d from offset %d, which holds %d", f, o, re[o])
				}
			}
			back, _ := UnreorderMeta32(re, tc.m, ncols)
			for i := range back {
				if int(back[i]) != i {
					t.Fatalf("unreorder[%d] = %d", i, back[i])
				}
			}
		})
	}
}

func TestMetaRegroup(t *testing.T) {
	m16, err := MetaTo16([]uint8{0x21, 0x43, 0x65, 0x87}, 1, 32)
	if err != nil || fmt.Sprintf("%x", m16) != "[4321 8765]" {
		t.Errorf("MetaTo16 = %x %v, want [4321 8765] (little-endian, nibble j = group 4c+j)", m16, err)
	}
	m32, _ := MetaTo32([]uint8{0x21, 0x43, 0x65, 0x87}, 1, 32)
	if fmt.Sprintf("%x", m32) != "[87654321]" {
		t.Errorf("MetaTo32 = %x, want [87654321]", m32)
	}
	b16, _ := MetaFrom16(m16, 1, 32)
	b32, _ := MetaFrom32(m32, 1, 32)
	if fmt.Sprintf("%x %x", b16, b32) != "21436587 21436587" {
		t.Errorf("round trip %x %x", b16, b32)
	}
}

func TestRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	const E, N, K = 3, 32, 64
	codes := make([]uint8, E*N*K)
	for i := range codes {
		codes[i] = uint8(rng.Intn(16))
	}
	for _, rule := range TieRules() {
		kept, _, err := Select(codes, E*N, K, rule)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []Layout{RowMajor, Transposed} {
			comp, meta, _ := Compress(codes, E, N, K, rule, l)
			dense, err := Decompress(comp, meta, E, N, K, l)
			if err != nil || string(dense) != string(kept) {
				t.Fatalf("%s/%s: decompress(compress) != select: %v", rule.Name, l, err)
			}
			// Reordering the row-major metadata of each expert round-trips.
			if l == RowMajor {
				for e := 0; e < E; e++ {
					m16, _ := MetaTo16(meta[e*N*K/8:(e+1)*N*K/8], N, K)
					re, err := ReorderMeta16(m16, N, K/16)
					if err != nil {
						t.Fatal(err)
					}
					un, _ := UnreorderMeta16(re, N, K/16)
					if fmt.Sprint(un) != fmt.Sprint(m16) {
						t.Fatal("reorder round trip failed")
					}
				}
			}
		}
	}
}
