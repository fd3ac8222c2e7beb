package gemv

import (
	"math"
	"strings"
	"testing"
)

func TestScheduleRoundTrip(t *testing.T) {
	for _, name := range Names() {
		s, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", name, err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		back, err := Lookup(s.String())
		if err != nil {
			t.Fatalf("Lookup(%q): %v", s.String(), err)
		}
		if back != s {
			t.Errorf("%s: round trip %q gave %+v, want %+v", name, s.String(), back, s)
		}
		if n, ok := NameOf(s); !ok || n != name {
			t.Errorf("NameOf(%s) = %q, %v", name, n, ok)
		}
	}
}

func TestScheduleSpec(t *testing.T) {
	// The spec string of dgx-vllm v7's schedule, written out by hand.
	const want = "chunk=64,lanes=0,group=8,fma=1,acc=fp32,partial=fp16,reduce=strided4,out=fp16"
	if got := SparseV7.String(); got != want {
		t.Errorf("SparseV7 = %q, want %q", got, want)
	}
	if got := MMVQ.String(); got != "chunk=16,lanes=128,group=16,fma=1,acc=fp32,partial=fp32,reduce=butterfly32,out=fp32,nan=cuda" {
		t.Errorf("MMVQ = %q", got)
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, c := range []struct{ name, spec, want string }{
		{"unknown name", "nope", "unknown schedule"},
		{"missing key", "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq", `key "out": missing`},
		{"bad precision", "chunk=0,lanes=0,group=1,fma=0,acc=fp64,partial=fp32,reduce=seq,out=fp32", `key "acc": value "fp64", want one of fp32, fp16`},
		{"bad fma", "chunk=0,lanes=0,group=1,fma=yes,acc=fp32,partial=fp32,reduce=seq,out=fp32", "fma"},
		{"group zero", "chunk=0,lanes=0,group=0,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32", `key "group": value "0", want a count from 1`},
		{"chunk not multiple", "chunk=12,lanes=0,group=8,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32", "not a multiple of group"},
		{"butterfly width", "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=butterfly12,out=fp32", "power of two"},
		{"lanes vs width", "chunk=1,lanes=48,group=1,fma=0,acc=fp32,partial=fp32,reduce=butterfly32,out=fp32", "multiple of butterfly width"},
		{"fused fp16", "chunk=0,lanes=0,group=1,fma=1,acc=fp16,partial=fp32,reduce=seq,out=fp32", "fused fp16"},
		{"repeated", "chunk=0,chunk=0", `key "chunk": given twice`},
		{"spaces", "chunk=0, lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32", `write it as "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32"`},
		{"lanes above MaxDim", "chunk=16,lanes=10000000,group=16,fma=1,acc=fp32,partial=fp32,reduce=seq,out=fp32", `key "lanes": value "10000000", want a count from 0 to 1048576`},
		{"leading zero", "chunk=016,lanes=0,group=16,fma=1,acc=fp32,partial=fp32,reduce=seq,out=fp32", `key "chunk": value "016"`},
		{"width above MaxDim", "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=strided2000000,out=fp32", "width"},
		{"not kv", "chunk=0,lanes", "not key=value"},
		{"bad nan", "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32,nan=x86", "nan="},
		{"unknown key", "chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32,x=1", "unknown key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Lookup(c.spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Lookup(%q) error = %v, want containing %q", c.spec, err, c.want)
			}
		})
	}
}

// TestScheduleCanonical: a spec with its keys in another order is the
// same schedule, and String spells it canonically.
func TestScheduleCanonical(t *testing.T) {
	s, err := Parse("out=fp32,nan=cuda,reduce=butterfly32,partial=fp32,acc=fp32,fma=1,group=16,lanes=128,chunk=16")
	if err != nil {
		t.Fatal(err)
	}
	if s != MMVQ {
		t.Errorf("reordered mmvq spec = %+v, want %+v", s, MMVQ)
	}
	if c, err := Grammar().Canonical("out=fp32,nan=cuda,reduce=butterfly32,partial=fp32,acc=fp32,fma=1,group=16,lanes=128,chunk=16"); err != nil || c != MMVQ.String() {
		t.Errorf("Canonical = %q, %v; want %q", c, err, MMVQ.String())
	}
}

// TestScheduleFits: a count above the longest reduction rounded up to a
// power of two is refused, naming the key: mmvq's 128 lanes fit a
// reduction of 100 elements, not one of 64.
func TestScheduleFits(t *testing.T) {
	for _, c := range []struct {
		s    Schedule
		k    int
		want string
	}{
		{MMVQ, 4096, ""},
		{MMVQ, 100, ""}, // 128 lanes, a power of two above 100
		{MMVQ, 64, "lanes=128 exceeds 64"},
		{Schedule{ChunkK: 0, Lanes: 10000000, GroupK: 1, Reduce: Sequential}, 4096, "lanes=10000000 exceeds 4096"},
		{Schedule{ChunkK: 8192, GroupK: 1, Reduce: Sequential}, 4096, "chunk=8192 exceeds 4096"},
		{Schedule{GroupK: 1, Reduce: Strided, Width: 5000}, 4096, "width=5000"},
	} {
		err := c.s.Fits(c.k)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s.Fits(%d) = %v, want %q", c.s, c.k, err, c.want)
		}
	}
}

// TestSummaries: every named schedule has a summary, and it names fp16
// partials or an fp16 output exactly when the schedule has them.
func TestSummaries(t *testing.T) {
	for _, name := range Names() {
		sc, _ := Lookup(name)
		doc := Summary(name)
		if doc == "" {
			t.Errorf("%s: no summary", name)
			continue
		}
		if got, want := strings.Contains(doc, "fp16 partial"), sc.Partial == FP16 || sc.Accum == FP16; got != want {
			t.Errorf("%s: summary %q mentions fp16 partials: %v, schedule has them: %v", name, doc, got, want)
		}
		if got, want := strings.Contains(doc, "fp16 output"), sc.Out == FP16; got != want {
			t.Errorf("%s: summary %q mentions an fp16 output: %v, schedule has one: %v", name, doc, got, want)
		}
	}
	if Summary("chunk=64") != "" {
		t.Error("a spec string has a summary")
	}
}

// TestCanonicalNaN: a schedule with nan=cuda writes a NaN result as
// 0x7FFFFFFF whatever NaN reached it (here an fp16 weight NaN with a
// payload, 0x7E01, widened to 0x7FC02000); without it the operand's NaN
// comes through.
func TestCanonicalNaN(t *testing.T) {
	const one = 0x3C00 // fp16 1.0
	w := []uint16{one, 0x7E01, one, one}
	x := []uint16{one, one, one, one}
	for _, c := range []struct {
		s    Schedule
		want uint32
	}{
		{Schedule{GroupK: 1, Accum: FP32, Partial: FP32, Out: FP32, CanonicalNaN: true}, 0x7FFFFFFF},
		{Schedule{GroupK: 1, Accum: FP32, Partial: FP32, Out: FP32}, 0x7FC02000},
	} {
		y, err := F16GEMV(w, x, 4, 1, c.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := math.Float32bits(y[0]); got != c.want {
			t.Errorf("%s: NaN output 0x%08x, want 0x%08x", c.s, got, c.want)
		}
	}
}

// FuzzParse: the schedule parser never panics; a schedule it accepts is
// valid, within MaxDim, and String spells it so that it parses back to
// the same schedule.
func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		f.Add(named[n].String())
	}
	for _, s := range []string{
		"out=fp32,nan=cuda,reduce=butterfly32,partial=fp32,acc=fp32,fma=1,group=16,lanes=128,chunk=16",
		"chunk=16,lanes=10000000,group=16,fma=1,acc=fp32,partial=fp32,reduce=seq,out=fp32",
		"chunk=0,lanes=0,group=1,fma=0,acc=fp32,partial=fp32,reduce=strided0,out=fp32", "chunk=0, lanes=0", "reduce=butterfly",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%q: accepted an invalid schedule: %v", spec, err)
		}
		back, err := Parse(s.String())
		if err != nil || back != s {
			t.Fatalf("%q: String %q parses to %+v, %v; want %+v", spec, s.String(), back, err, s)
		}
		if c, err := Grammar().Canonical(spec); err != nil || c != s.String() {
			t.Fatalf("%q: canonical %q, %v; String %q", spec, c, err, s.String())
		}
	})
}

// TestReductionStart: a reduction sum starts at its first addend, so -0
// lane results reduce to -0 (backends/cuda/kernels/sparse24.cu reduce_tiles:
// accumulator j starts as tile j); init=zero starts at +0, as torch's sum
// does, and turns exactly that -0 into +0. Each lane's tile sum is
// fma(-2^-100, 2^-100, +0) = -2^-200, which rounds to -0.
func TestReductionStart(t *testing.T) {
	tiny := float32(0x1p-100)
	for _, tc := range []struct {
		name string
		s    Schedule
		x    []float32
		want uint32
	}{
		{"sparse-v7 all -0", SparseV7, []float32{-tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny}, 0x80000000},
		{"sparse-v7 init=zero all -0", withZeroInit(SparseV7), []float32{-tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny}, 0x00000000},
		{"sparse-v7-seq all -0", SparseV7Seq, []float32{-tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny, -tiny}, 0x80000000},
		{"sparse-v7 init=zero keeps -1", withZeroInit(SparseV7), []float32{-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0xBF800000},
	} {
		y := make([]float32, len(tc.x))
		for i := range y {
			y[i] = tiny
			if tc.x[i] == -1 {
				y[i] = 1
			}
		}
		r, _ := tc.s.run(tc.x, y, nil)
		if got := math.Float32bits(r); got != tc.want {
			t.Errorf("%s: %#08x, want %#08x", tc.name, got, tc.want)
		}
	}
	s, err := Parse(withZeroInit(SparseV7).String())
	if err != nil || !s.ZeroInit || !strings.HasSuffix(s.String(), ",init=zero") {
		t.Errorf("init=zero does not round-trip: %v %v", s, err)
	}
	if _, err := Parse(SparseV7.String() + ",init=first"); err == nil {
		t.Error("Parse accepted init=first")
	}
}

func withZeroInit(s Schedule) Schedule {
	s.ZeroInit = true
	return s
}
