package gemv

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/bitexact/bitexact/refimpl/claim"
	"github.com/bitexact/bitexact/refimpl/nanconv"
)

// Precision is a floating-point format a value is rounded to.
type Precision uint8

const (
	// FP32 is IEEE binary32, round to nearest even (no rounding for values
	// already in float32).
	FP32 Precision = iota
	// FP16 is IEEE binary16, round to nearest even, overflow to infinity.
	FP16
)

func (p Precision) String() string {
	switch p {
	case FP32:
		return "fp32"
	case FP16:
		return "fp16"
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

func parsePrecision(s string) (Precision, error) {
	switch s {
	case "fp32":
		return FP32, nil
	case "fp16":
		return FP16, nil
	}
	return 0, fmt.Errorf("unknown precision %q (want fp32 or fp16)", s)
}

// Reduction is the order in which the lane results are added together. All
// reduction additions are float32.
type Reduction uint8

const (
	// Sequential adds lanes in index order: ((p0 + p1) + p2) + ...
	Sequential Reduction = iota
	// Pairwise adds adjacent pairs level by level, ((p0+p1) + (p2+p3)) +
	// ..., an odd last element passing to the next level unchanged: the
	// classic pairwise-summation tree.
	Pairwise
	// Butterfly is a shuffle-xor (or simd_sum style) reduction over Width
	// lanes: lane l first adds lanes l+Width, l+2*Width, ... in order (the
	// cross-warp fold through shared memory), then for offset = Width/2,
	// Width/4, ..., 1 every lane adds the lane at l^offset. Lane 0's
	// result, the tree (p0+p16) + (p8+p24) ... for Width 32, is the result
	// (every lane holds the same bits: float addition commutes).
	Butterfly
	// Strided folds the lanes by stride Width into Width accumulators
	// (accumulator j adds lanes j, j+Width, j+2*Width, ... in order) and
	// adds those in order: the pattern of a reduction kernel that keeps
	// Width independent accumulators per thread for instruction-level
	// parallelism.
	Strided
)

func (r Reduction) String() string {
	switch r {
	case Sequential:
		return "seq"
	case Pairwise:
		return "pairwise"
	case Butterfly:
		return "butterfly"
	case Strided:
		return "strided"
	}
	return fmt.Sprintf("Reduction(%d)", uint8(r))
}

// Schedule is the order of operations of a GEMV, as data. A float GEMV is
// bit-exact only against a stated schedule; a native kernel declares the
// schedule it implements and the reference evaluates that schedule.
//
// The K axis is cut into groups of GroupK elements (the op defines which
// products a group holds and what multiplies its sum: the sparse FP4 op
// multiplies by the group's block scale, MXFP4 by the block's d, AWQ by
// nothing). Groups are cut into chunks of ChunkK elements; chunk c is
// accumulated by lane c mod Lanes, each lane taking its chunks in K order
// into one accumulator that starts at +0. The lane results are rounded to
// Partial, added in the Reduction order in float32, and the sum is rounded
// to Out. Every reduction sum starts at its first addend, not at +0: a
// strided accumulator j starts as lane j, a sequential sum as lane 0, so
// lane results that are all -0 (a negative tile sum rounded to an fp16 -0
// partial) reduce to -0, as backends/cuda/kernels/sparse24.cu reduce_tiles
// does (acc[j] = tile j for t < W, then __fadd_rn). With ZeroInit every sum
// starts at +0 instead, as torch's sum does.
//
// A group contributes x*y to its lane (x the group's sum, y its multiplier,
// or for GroupK 1 the two factors of the product): with Fused that is one
// correctly rounded fused multiply-add acc = fma(x, y, acc), without it two
// roundings acc = float32(x*y) + acc. Inside a group of several products
// the sum is p0 followed by p += a*b for each further product, fused or
// not by the same flag.
type Schedule struct {
	// ChunkK is the number of K elements per chunk; 0 means all of K is
	// one chunk. A multiple of GroupK.
	ChunkK int
	// Lanes is the number of accumulators; 0 means one per chunk (K-tiles
	// each reduced to a partial, as in a split-K grid).
	Lanes int
	// GroupK is the number of K elements whose products are summed before
	// the group's multiplier is applied and the group joins its lane.
	GroupK int
	// Fused selects single-rounding fused multiply-adds.
	Fused bool
	// Accum is the lane accumulator precision. With FP16 each group's
	// contribution is rounded to fp16 and added in fp16 (fused fp16
	// accumulation is not modelled).
	Accum Precision
	// Partial is the precision each lane result is stored in before the
	// reduction (a split-K kernel writing fp16 partials uses FP16).
	Partial Precision
	// Reduce is the order of the lane reduction.
	Reduce Reduction
	// Width is the butterfly width (a power of two) or the stride of
	// Strided; unused by the other reductions.
	Width int
	// Out is the precision of the result.
	Out Precision
	// CanonicalNaN writes every NaN result as the GPU's canonical NaN,
	// 0x7FFFFFFF (an fp16 output then encodes it as 0x7FFF): NVIDIA GPUs
	// return that NaN from every float instruction whatever the NaN
	// operands (PTX ISA, "Floating-point ... NaN results are canonical"),
	// where Go on amd64 and arm64 propagates an operand's payload. It is
	// the NaN convention nanconv.CUDA of the decoders and dequantizers,
	// spelled nan=cuda in the spec as in their op parameter; left out of
	// it when false.
	CanonicalNaN bool
	// ZeroInit starts every reduction sum at +0 (torch's sum and a
	// reduction kernel that zeroes its accumulators) instead of at its
	// first addend. In round-to-nearest x + y is -0 only when x and y are
	// both -0, and v + (+0) is v for every v but -0, so this changes
	// exactly one thing: a -0 result becomes +0. Spelled init=zero in the
	// spec; left out of it when false.
	ZeroInit bool
}

// Validate reports whether the schedule is well formed.
func (s Schedule) Validate() error {
	switch {
	case s.GroupK < 1:
		return fmt.Errorf("schedule %s: group must be at least 1", s)
	case s.ChunkK < 0:
		return fmt.Errorf("schedule %s: chunk must not be negative", s)
	case s.ChunkK > 0 && s.ChunkK%s.GroupK != 0:
		return fmt.Errorf("schedule %s: chunk %d is not a multiple of group %d", s, s.ChunkK, s.GroupK)
	case s.Lanes < 0:
		return fmt.Errorf("schedule %s: lanes must not be negative", s)
	case s.Accum > FP16 || s.Partial > FP16 || s.Out > FP16:
		return fmt.Errorf("schedule %s: unknown precision", s)
	case s.Accum == FP16 && s.Fused:
		return fmt.Errorf("schedule %s: fused fp16 accumulation is not modelled", s)
	case s.Reduce > Strided:
		return fmt.Errorf("schedule %s: unknown reduction", s)
	case s.ChunkK > MaxDim || s.Lanes > MaxDim || s.GroupK > MaxDim || s.Width > MaxDim:
		return fmt.Errorf("schedule %s: a count exceeds %d", s, MaxDim)
	}
	if s.Reduce == Strided && s.Width < 1 {
		return fmt.Errorf("schedule %s: strided width %d must be at least 1", s, s.Width)
	}
	if s.Reduce == Butterfly {
		if s.Width < 2 || s.Width&(s.Width-1) != 0 {
			return fmt.Errorf("schedule %s: butterfly width %d is not a power of two >= 2", s, s.Width)
		}
		if s.Lanes > 0 && s.Lanes%s.Width != 0 {
			return fmt.Errorf("schedule %s: lanes %d not a multiple of butterfly width %d", s, s.Lanes, s.Width)
		}
	}
	return nil
}

// String is the canonical spec string of the schedule, for example
// "chunk=64,lanes=0,group=8,fma=1,acc=fp32,partial=fp16,reduce=seq,out=fp16".
// Lookup parses it back; golden manifests record it.
func (s Schedule) String() string {
	fma := 0
	if s.Fused {
		fma = 1
	}
	red := s.Reduce.String()
	if s.Reduce == Butterfly || s.Reduce == Strided {
		red += strconv.Itoa(s.Width)
	}
	spec := fmt.Sprintf("chunk=%d,lanes=%d,group=%d,fma=%d,acc=%s,partial=%s,reduce=%s,out=%s",
		s.ChunkK, s.Lanes, s.GroupK, fma, s.Accum, s.Partial, red, s.Out)
	if s.CanonicalNaN {
		spec += ",nan=" + nanconv.CUDA.Name
	}
	if s.ZeroInit {
		spec += ",init=zero"
	}
	return spec
}

// MaxDim bounds every count of a schedule spec (chunk, lanes, group and
// the reduction width): 2^20, beyond the K of any GEMV this reference is
// asked to run, so that no spec string can make evaluating it cost more
// than the GEMV's own size allows. Suites bound them further by the
// reduction lengths of their tasks (Schedule.Fits).
const MaxDim = 1 << 20

// grammar is a spec string's: every key of String, in String's order.
var grammar = &claim.Grammar{What: "schedule", Keys: []claim.Key{
	{Name: "chunk", Check: claim.Count(0, MaxDim)},
	{Name: "lanes", Check: claim.Count(0, MaxDim)},
	{Name: "group", Check: claim.Count(1, MaxDim)},
	{Name: "fma", Values: []string{"0", "1"}},
	{Name: "acc", Values: []string{"fp32", "fp16"}},
	{Name: "partial", Values: []string{"fp32", "fp16"}},
	{Name: "reduce", Values: []string{"seq", "pairwise"}, Check: checkWidth},
	{Name: "out", Values: []string{"fp32", "fp16"}},
	{Name: "nan", Values: []string{nanconv.CUDA.Name}, Optional: true},
	{Name: "init", Values: []string{"zero"}, Optional: true},
}}

// Grammar is the claim grammar of a spec string (refimpl/claim): what a
// profile's schedule key nests when it is not a named schedule.
func Grammar() *claim.Grammar { return grammar }

// checkWidth accepts butterflyW and stridedW.
func checkWidth(v string) error {
	for _, r := range []string{"butterfly", "strided"} {
		if w, ok := strings.CutPrefix(v, r); ok {
			if _, err := claim.ParseCount(w, 1, MaxDim); err != nil {
				return fmt.Errorf("reduce=%q: width: %v", v, err)
			}
			return nil
		}
	}
	return fmt.Errorf("value %q, want seq, pairwise, butterflyW or stridedW", v)
}

// Parse reads a spec string under the one claim rule (refimpl/claim):
// every key String writes, nan optional (its absence means NaN results
// keep the host's bits) and init optional (its absence means sums start at
// their first addend), in any order, no spaces, counts in decimal up to
// MaxDim. Schedule.String is its canonical spelling.
func Parse(spec string) (Schedule, error) {
	c, err := grammar.Parse(spec)
	if err != nil {
		return Schedule{}, err
	}
	v := c.Values
	var s Schedule
	s.ChunkK, _ = claim.ParseCount(v["chunk"], 0, MaxDim)
	s.Lanes, _ = claim.ParseCount(v["lanes"], 0, MaxDim)
	s.GroupK, _ = claim.ParseCount(v["group"], 1, MaxDim)
	s.Fused = v["fma"] == "1"
	s.Accum, _ = parsePrecision(v["acc"])
	s.Partial, _ = parsePrecision(v["partial"])
	s.Out, _ = parsePrecision(v["out"])
	s.CanonicalNaN = v["nan"] == nanconv.CUDA.Name
	s.ZeroInit = v["init"] == "zero"
	switch r := v["reduce"]; r {
	case "seq":
		s.Reduce = Sequential
	case "pairwise":
		s.Reduce = Pairwise
	default:
		if w, ok := strings.CutPrefix(r, "butterfly"); ok {
			s.Reduce = Butterfly
			s.Width, _ = claim.ParseCount(w, 1, MaxDim)
		} else {
			s.Reduce = Strided
			s.Width, _ = claim.ParseCount(strings.TrimPrefix(r, "strided"), 1, MaxDim)
		}
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// Fits reports whether every count of s is one a GEMV whose reductions
// are at most k long can use: a chunk, group, lane count or reduction
// width above k rounded up to a power of two (the width of a butterfly
// over k lanes) names lanes or elements that do not exist. The error
// names the count, its limit and why.
func (s Schedule) Fits(k int) error {
	lim := 1
	for lim < k {
		lim <<= 1
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"chunk", s.ChunkK}, {"lanes", s.Lanes}, {"group", s.GroupK}, {"width", s.Width}} {
		if c.v > lim {
			return fmt.Errorf("schedule %s: %s=%d exceeds %d, the longest reduction (K=%d) rounded up to a power of two: no task has that many elements or lanes to use", s, c.key, c.v, lim, k)
		}
	}
	return nil
}

// Named schedules. Each states the kernel it models; see
// docs/rationale/gemv.md for the sources.
var (
	// SparseV7 is dgx-vllm sparse_fp4_v7.cu batched_sparse_v7_kernel
	// (TILE_K 64, one thread per output column and K tile) followed by
	// PyTorch's C.sum(1): per 8 K the 4 kept products are summed (exact:
	// E2M1 times fp16 fits float32), sum times the block scale is
	// accumulated with nvcc's default contraction acc = fma(sum, scale, acc)
	// (FFMA in the SASS, CUDA 13.0, sm_90), each tile's acc is stored as
	// fp16 (__float2half), and the fp16 tile partials are summed in float32
	// with four interleaved accumulators, the result rounded to fp16: the
	// order torch 2.11 on an H100 was observed to use for 8 to 32 tiles
	// (K <= 2048); with 64 or more tiles PyTorch's order differs and is not
	// modelled.
	SparseV7 = Schedule{ChunkK: 64, GroupK: 8, Fused: true, Accum: FP32, Partial: FP16, Reduce: Strided, Width: 4, Out: FP16}
	// SparseV7NoFMA is SparseV7 compiled with -fmad=false.
	SparseV7NoFMA = Schedule{ChunkK: 64, GroupK: 8, Fused: false, Accum: FP32, Partial: FP16, Reduce: Strided, Width: 4, Out: FP16}
	// SparseV7Seq is SparseV7 with the tile partials added in tile order
	// (a kernel that reduces its split-K partials itself, sequentially).
	SparseV7Seq = Schedule{ChunkK: 64, GroupK: 8, Fused: true, Accum: FP32, Partial: FP16, Reduce: Sequential, Out: FP16}
	// MMVQ is llama.cpp ggml-cuda/mmvq.cu mul_mat_vec_q for MXFP4 with one
	// column (4 warps of 32, qi/vdr = 2 threads per 32-block): thread t
	// takes half-blocks t, t+128, ... (16 elements, qs bytes 0-7 or 8-15),
	// tmp = fma(d, sumi, tmp) after inlining vec_dot_mxfp4_q8_1, warps 1-3
	// are added into warp 0 in order, then warp_reduce_sum (xor 16..1).
	MMVQ = Schedule{ChunkK: 16, Lanes: 128, GroupK: 16, Fused: true, Accum: FP32, Partial: FP32, Reduce: Butterfly, Width: 32, Out: FP32, CanonicalNaN: true}
	// MMVQNoFMA is MMVQ with tmp += float32(d*sumi).
	MMVQNoFMA = Schedule{ChunkK: 16, Lanes: 128, GroupK: 16, Fused: false, Accum: FP32, Partial: FP32, Reduce: Butterfly, Width: 32, Out: FP32, CanonicalNaN: true}
	// Seq is one accumulator over all of K, unfused, float32 out.
	Seq = Schedule{GroupK: 1, Accum: FP32, Partial: FP32, Reduce: Sequential, Out: FP32}
	// SeqFMA is Seq with fused multiply-adds.
	SeqFMA = Schedule{GroupK: 1, Fused: true, Accum: FP32, Partial: FP32, Reduce: Sequential, Out: FP32}
	// SeqF16Out is Seq with the result rounded to fp16: a W4A16 GEMV with
	// float32 accumulation and an fp16 output.
	SeqF16Out = Schedule{GroupK: 1, Accum: FP32, Partial: FP32, Reduce: Sequential, Out: FP16}
	// Warp32 is a warp K-split: element k to lane k mod 32, fused
	// accumulation, warp_reduce_sum.
	Warp32 = Schedule{ChunkK: 1, Lanes: 32, GroupK: 1, Fused: true, Accum: FP32, Partial: FP32, Reduce: Butterfly, Width: 32, Out: FP32}
	// Tree64 is 64-element K tiles, each summed sequentially, unfused, the
	// tiles added pairwise.
	Tree64 = Schedule{ChunkK: 64, GroupK: 1, Accum: FP32, Partial: FP32, Reduce: Pairwise, Out: FP32}
)

var named = map[string]Schedule{
	"sparse-v7":       SparseV7,
	"sparse-v7-nofma": SparseV7NoFMA,
	"sparse-v7-seq":   SparseV7Seq,
	"mmvq":            MMVQ,
	"mmvq-nofma":      MMVQNoFMA,
	"seq":             Seq,
	"seq-fma":         SeqFMA,
	"seq-f16out":      SeqF16Out,
	"warp32":          Warp32,
	"tree64":          Tree64,
}

// summaries say in one line what each named schedule computes.
var summaries = map[string]string{
	"sparse-v7":       "dgx-vllm sparse_fp4_v7 with nvcc's FMA contraction: 64-element K tiles summed into fp16 partials, four interleaved accumulators, fp16 output",
	"sparse-v7-nofma": "unfused multiply-add in the v7 schedule (64-element K tiles summed into fp16 partials, four interleaved accumulators, fp16 output)",
	"sparse-v7-seq":   "the v7 schedule with its fp16 partials (one per 64-element K tile) added in tile order, fp16 output",
	"mmvq":            "llama.cpp mul_mat_vec_q: fused multiply-add, 128 lanes over 16-element half-blocks, warps added in order, then a butterfly warp reduction",
	"mmvq-nofma":      "unfused multiply-add in the mmvq schedule",
	"seq":             "unfused multiply then add, sequential order",
	"seq-fma":         "fused multiply-add (FMA contraction), sequential order",
	"seq-f16out":      "float32 accumulation as seq, the result rounded once to an fp16 output",
	"warp32":          "a 32-lane warp K-split with fused multiply-add, then a butterfly warp reduction",
	"tree64":          "64-element K tiles each summed in order, unfused, the tiles added pairwise",
}

// Summary says in one line what the named schedule computes; "" for a
// name that is not a named schedule.
func Summary(name string) string { return summaries[name] }

// Names lists the named schedules, sorted.
func Names() []string {
	n := make([]string, 0, len(named))
	for k := range named {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup returns a named schedule, or parses a spec string (anything
// containing '=') as written by Schedule.String.
func Lookup(name string) (Schedule, error) {
	if s, ok := named[name]; ok {
		return s, nil
	}
	if strings.Contains(name, "=") {
		return Parse(name)
	}
	return Schedule{}, fmt.Errorf("unknown schedule %q (known: %s, or a spec string)", name, strings.Join(Names(), ", "))
}

// NameOf returns the name of a named schedule equal to s.
func NameOf(s Schedule) (string, bool) {
	for _, k := range Names() {
		if named[k] == s {
			return k, true
		}
	}
	return "", false
}
