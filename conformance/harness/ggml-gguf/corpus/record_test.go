package corpus

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/gguf"
)

var records = []string{"nofma", "fma", "arm64", "arm64-nofma"}

func readRecord(t *testing.T, name string) Record {
	t.Helper()
	rec, err := ReadRecord(filepath.Join("..", "corpus-records", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Corpus != CorpusDigest() {
		t.Fatalf("%s: recorded on corpus %.12s, the corpus is now %.12s: rerun conformance/harness/ggml-gguf/run.sh", name, rec.Corpus, CorpusDigest())
	}
	return rec
}

// TestRecords holds refimpl/gguf, under each record's profile, to what
// ggml's C did on the corpus: every quantize, dequantize and dot-product
// output bit for bit.
func TestRecords(t *testing.T) {
	for _, name := range records {
		t.Run(name, func(t *testing.T) {
			rec := readRecord(t, name)
			if !strings.HasPrefix(rec.Implementation, "ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465") {
				t.Errorf("record ran %s, want ggml-org/ggml@d99724f", rec.Implementation)
			}
			p, err := gguf.LookupProfile(rec.Profile)
			if err != nil {
				t.Fatal(err)
			}
			outs, err := Reference(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Ops) != len(outs) {
				t.Errorf("record has %d ops, the reference %d: every op runs on ggml", len(rec.Ops), len(outs))
			}
			diffs, err := Compare(rec, outs)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				t.Errorf("profile %s against ggml %s: %s", p.Name, rec.Build, d)
			}
		})
	}
}

// TestRecordsSeparateProfiles: each record tells its profile from the
// other two (the corpus reaches the contraction sites, the casts and the
// default NaN), so TestRecords could fail for a wrong profile; and it
// names the ops where the builds differ.
func TestRecordsSeparateProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference six times")
	}
	// the ops each pair of builds must differ in: contraction (nofma/fma)
	// in the quantizers' x*id + c and nearest_int(a*b) and in every dot
	// product; casts, the default NaN and one vectorizer decision
	// (fma/arm64)
	want := map[[2]string][]string{
		{"nofma", "fma"}: {"quantize q4_0", "quantize q5_0", "quantize q2_K", "quantize q4_K", "quantize q5_K",
			"quantize q6_K", "quantize q8_K", "vecdot q4_0_q8_0", "vecdot q8_0_q8_0", "vecdot q4_K_q8_K", "vecdot q6_K_q8_K"},
		{"fma", "arm64"}:   {"quantize q4_0", "quantize q2_0", "quantize q4_K", "dequantize q4_0", "vecdot q4_0_q8_0"},
		{"nofma", "arm64"}: {"quantize q4_0", "dequantize q2_K"},
		// contraction alone on arm64; casts and NaNs alone without it
		{"arm64", "arm64-nofma"}: {"quantize q4_0", "quantize q5_0", "quantize q4_K", "quantize q8_K", "vecdot q6_K_q8_K"},
		{"nofma", "arm64-nofma"}: {"quantize q2_0", "quantize tq1_0", "dequantize q4_K"},
	}
	for pair, ops := range want {
		rec := readRecord(t, pair[0])
		p, err := gguf.LookupProfile(pair[1])
		if err != nil {
			t.Fatal(err)
		}
		outs, err := Reference(p)
		if err != nil {
			t.Fatal(err)
		}
		diffs, err := Compare(rec, outs)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(diffs, "\n")
		// every dequantizer's products are exact (a quant of at most 8
		// bits times an fp16 scale times a 6-bit sub-scale), so
		// contraction cannot change a dequantized value
		if pair == [2]string{"nofma", "fma"} && strings.Contains(got, "dequantize") {
			t.Errorf("nofma and fma differ in a dequantizer:\n%s", got)
		}
		for _, op := range ops {
			if !strings.Contains(got, op+":") {
				t.Errorf("record %s and profile %s agree on %s; want a difference", pair[0], pair[1], op)
			}
		}
	}
}

// TestCorpusKinds: the corpus holds the inputs the reported bugs need.
func TestCorpusKinds(t *testing.T) {
	have := map[string]int{}
	for _, k := range Kinds() {
		have[k]++
	}
	for _, k := range []string{"zero", "subscales", "ties-q4_0", "ties-q8_0", "half-ulp", "nonfinite", "large", "tiny"} {
		if have[k] == 0 {
			t.Errorf("corpus has no %q group", k)
		}
	}
	if n := len(Floats()); n != Groups*256 {
		t.Errorf("%d floats, want %d", n, Groups*256)
	}
	// every IQ4 level and every 6-bit IQ4_XS scale appear
	b := Blocks(gguf.IQ4_XS)
	levels := map[byte]bool{}
	scales := map[int]bool{}
	for i := 0; i+136 <= len(b); i += 136 {
		blk := b[i : i+136]
		sh := int(blk[2]) | int(blk[3])<<8
		for ib := 0; ib < 8; ib++ {
			scales[int(blk[4+ib/2]>>(4*(ib%2))&0xF)|(sh>>(2*ib)&3)<<4] = true
		}
		for _, q := range blk[8:] {
			levels[q&0xF], levels[q>>4] = true, true
		}
	}
	if len(levels) != 16 || len(scales) != 64 {
		t.Errorf("IQ4_XS corpus: %d levels, %d scales; want 16, 64", len(levels), len(scales))
	}
}

// TestGGUFPyRecord holds gguf-py's numpy quantizers (llama.cpp
// gguf-py/gguf/quants.py, run by conformance/harness/gguf-py) to profile
// fma: every dequantizer it has matches bit for bit, and its quantizers
// match but for the groups named here, where gguf-py differs from ggml's
// C for a reason of its own.
func TestGGUFPyRecord(t *testing.T) {
	rec, err := ReadRecord(filepath.Join("..", "..", "gguf-py", "corpus-records", "gguf-py.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Corpus != CorpusDigest() {
		t.Fatalf("gguf-py recorded on corpus %.12s, the corpus is now %.12s: rerun conformance/harness/gguf-py/run.sh", rec.Corpus, CorpusDigest())
	}
	p, err := gguf.LookupProfile(rec.Profile)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "fma" {
		t.Fatalf("gguf-py record is held to %s, want fma", p.Name)
	}
	// groups of the quantize corpus (Kinds): 1 is -0/+0 alternating, 61
	// and 62 hold one NaN per 32-value block, 63 a NaN last in each block
	const negzero, nanPos, nanNeg, nanLast, nonfiniteBlocks = 1, 61, 62, 63, 65
	if k := Kinds(); k[negzero] != "negzero" || k[nanPos] != "nonfinite" || k[nanLast] != "nan-last" || k[nonfiniteBlocks] != "nonfinite-blocks" {
		t.Fatalf("corpus groups moved: %q %q %q %q", k[negzero], k[nanPos], k[nanLast], k[nonfiniteBlocks])
	}
	// nonfiniteBlocks (blocks of +Inf, -Inf, NaN, Inf and NaN): numpy's
	// argmax returns a NaN's index and max - min of a block of +Inf is
	// Inf - Inf = NaN; ggml's amax < |v| skips a NaN (d = -0 for a NaN
	// block) and its min starts at FLT_MAX (d = (Inf - FLT_MAX)/15 = Inf)
	want := map[string][]int{
		// argmax(|x|) picks the first element, -0, so d = -0/-8 = +0;
		// ggml's fold never replaces its initial +0 max, d = -0. A NaN
		// is the argmax, so d = NaN (fp16 0x7E00) and every code 0;
		// ggml's amax < |v| skips a NaN
		"quantize q4_0": {negzero, nanPos, nanNeg, nanLast, nonfiniteBlocks},
		"quantize q5_0": {negzero, nanPos, nanNeg, nanLast, nonfiniteBlocks},
		// np.min over -0 and +0 gave +0 (m = 0x0000), ggml's v < min
		// keeps the first -0 (m = 0x8000). np.max and np.min propagate a
		// NaN, so d and m are NaN; ggml's v < min, v > max skip it
		"quantize q4_1": {negzero, nanPos, nanNeg, nanLast, nonfiniteBlocks},
		"quantize q5_1": {negzero, nanPos, nanNeg, nanLast, nonfiniteBlocks},
		// np.max(|x|) propagates a NaN: d = NaN, every code 0; ggml's
		// MAX(amax, |v|) lets the next element replace a NaN (a NaN last
		// in the block stays, and there the two agree)
		"quantize q8_0":  {nanPos, nanNeg},
		"quantize tq1_0": {nanPos, nanNeg},
		"quantize tq2_0": {nanPos, nanNeg},
	}
	outs, err := Reference(p)
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]Op{}
	for _, o := range outs {
		d, err := o.Digest()
		if err != nil {
			t.Fatal(err)
		}
		ref[d.Op+" "+d.Name] = d
	}
	seen := map[string]bool{}
	for _, w := range rec.Ops {
		key := w.Op + " " + w.Name
		seen[key] = true
		g, ok := ref[key]
		if !ok || len(g.Units) != len(w.Units) {
			t.Errorf("%s: not in the reference, or another number of units", key)
			continue
		}
		var diff []int
		for u := 0; u < len(w.Units); u += 8 {
			if w.Units[u:u+8] != g.Units[u:u+8] {
				diff = append(diff, u/8)
			}
		}
		if fmt.Sprint(diff) != fmt.Sprint(want[key]) {
			t.Errorf("gguf-py %s differs from profile fma in units %v, want %v", key, diff, want[key])
		}
	}
	// what gguf-py implements of the corpus's ops at the recorded commit:
	// every quantizer but the K-quants', every dequantizer but q8_K's,
	// nvfp4's, q1_0's and q2_0's
	for _, key := range []string{"quantize q4_0", "quantize tq2_0", "dequantize q2_K", "dequantize q6_K", "dequantize iq4_nl", "dequantize iq4_xs"} {
		if !seen[key] {
			t.Errorf("gguf-py record lacks %s", key)
		}
	}
	if len(rec.Ops) != 21 {
		t.Errorf("gguf-py record has %d ops, want 21", len(rec.Ops))
	}
}
