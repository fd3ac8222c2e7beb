package corpus

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/gguf"
)

var records = []string{"nofma", "fma", "arm64"}

func readRecord(t *testing.T, name string) Record {
	t.Helper()
	rec, err := ReadRecord(filepath.Join("..", "records", name+".json"))
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
