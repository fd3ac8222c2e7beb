package corpus

import (
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/fp8block"
)

func records(t *testing.T) []Record {
	t.Helper()
	files, err := filepath.Glob("../corpus-records/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no records in ../corpus-records (%v)", err)
	}
	sort.Strings(files)
	var out []Record
	for _, f := range files {
		r, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if want := r.Job + "." + r.Device + ".json"; filepath.Base(f) != want {
			t.Errorf("%s holds %s", f, want)
		}
		out = append(out, r)
	}
	return out
}

// TestRecords holds every recorded stack and device to its named recipe,
// bit for bit; a documented NaN exception must be needed where declared.
func TestRecords(t *testing.T) {
	for _, r := range records(t) {
		used, err := Check(r)
		if err != nil {
			t.Error(err)
			continue
		}
		if r.NaNScaleFromRecord != "" && !used {
			t.Errorf("%s.%s: declares %s but every scale is the recipe's", r.Job, r.Device, r.NaNScaleFromRecord)
		}
	}
}

// TestRecordsCoverStacks: every recipe that was run has a record on
// each device it runs on, the GPU kernels on CUDA only, the torch code
// on both.
func TestRecordsCoverStacks(t *testing.T) {
	have := map[string]bool{}
	for _, r := range records(t) {
		have[r.Recipe] = true
	}
	for _, rc := range fp8block.Recipes() {
		if strings.HasPrefix(rc.Name, "vllm-cuda") {
			continue // vLLM's CUDA kernel needs vLLM's build: read, not run
		}
		want := []string{rc.Name}
		if rc.Torch {
			want = append(want, rc.Name+"@cpu")
		}
		for _, w := range want {
			if !have[w] {
				t.Errorf("no record holds recipe %s", w)
			}
		}
	}
}

// TestRecordsPinParameters: each measured parameter is needed; a recipe
// with it changed fails the records named here.
func TestRecordsPinParameters(t *testing.T) {
	type mut struct {
		name string
		f    func(r *fp8block.Recipe)
	}
	for _, tc := range []struct {
		record string
		muts   []mut
	}{
		{"vllm-triton.row.cuda", []mut{
			{"exact amax/448", func(r *fp8block.Recipe) { r.ScaleDiv = fp8block.DivideMax }},
			{"NaN clamped to +448 (xorsign)", func(r *fp8block.Recipe) { r.Clamp = fp8block.ClampNaNToSignedMax }},
			{"NaN kept by the clamp", func(r *fp8block.Recipe) { r.Clamp = fp8block.ClampKeepsNaN }},
			{"NaN reaches the amax", func(r *fp8block.Recipe) { r.AmaxNaN = fp8block.AmaxPropagatesNaN }},
			{"eps 1e-4", func(r *fp8block.Recipe) { r.Eps = 1e-4 }},
		}},
		{"vllm-triton-ue8m0.row.cuda", []mut{
			{"exponent-bit ceiling", func(r *fp8block.Recipe) { r.Pow2 = fp8block.Pow2BitCeil }},
			{"exact amax/448", func(r *fp8block.Recipe) { r.ScaleDiv = fp8block.DivideMax }},
		}},
		{"sglang-triton-ue8m0.tma.cuda", []mut{
			{"exponent-bit ceiling", func(r *fp8block.Recipe) { r.Pow2 = fp8block.Pow2BitCeil }},
		}},
		{"deepgemm.token.cuda", []mut{
			{"exact amax/448", func(r *fp8block.Recipe) { r.ScaleDiv = fp8block.DivideMax }},
			{"NaN skipped by the amax", func(r *fp8block.Recipe) { r.AmaxNaN = fp8block.AmaxIgnoresNaN }},
			{"eps 1e-10", func(r *fp8block.Recipe) { r.Eps = 1e-10 }},
		}},
		{"deepgemm.token.cpu", []mut{
			{"amax*f32(1/448)", func(r *fp8block.Recipe) { r.ScaleDiv = fp8block.MulRecipMax }},
			{"GPU NaN", func(r *fp8block.Recipe) { r.NaN = fp8block.NaNGPU }},
			{"satfinite cast", func(r *fp8block.Recipe) { r.Cast = fp8.Satfinite }},
		}},
		{"deepgemm-ue8m0.token.cuda", []mut{
			{"log2 ceiling", func(r *fp8block.Recipe) { r.Pow2 = fp8block.Pow2Log2Ceil }},
		}},
		{"te-pow2.block.cpu", []mut{
			{"no clamp", func(r *fp8block.Recipe) { r.Clamp = fp8block.NoClamp }},
			{"GPU NaN", func(r *fp8block.Recipe) { r.NaN = fp8block.NaNGPU }},
		}},
		{"te.vector.cuda", []mut{
			{"host NaN", func(r *fp8block.Recipe) { r.NaN = fp8block.NaNHost }},
		}},
	} {
		rec, err := Load("../corpus-records/" + tc.record + ".json")
		if err != nil {
			t.Fatal(err)
		}
		base, err := fp8block.Lookup(rec.Recipe)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tc.muts {
			r := base
			m.f(&r)
			if err := checkWith(rec, r); err == nil {
				t.Errorf("%s: recipe %s with %s still reproduces the record", tc.record, base.Name, m.name)
			}
		}
	}
}

// checkWith is Check with the recipe given rather than looked up.
func checkWith(rec Record, r fp8block.Recipe) error {
	for _, c := range Cases() {
		gr := 1
		if rec.Granularity == "128x128" {
			gr = Group
		}
		q, err := quantize(c, gr, r)
		if err != nil {
			return err
		}
		d := Digest(c, q.Codes, q.Scales)
		for _, cr := range rec.Cases {
			if cr.Name == c.Name && (cr.CodesSHA256 != d.CodesSHA256 || cr.Scales != d.Scales) {
				return errDiffers
			}
		}
	}
	return nil
}

var errDiffers = errors.New("differs from the record")

// TestInputs: the generator's output is what the records were made on,
// and its shape is what the harness needs.
func TestInputs(t *testing.T) {
	const want = "b4b23707941897817977834bf04de25812d98c9e0857983650dd19075db71520"
	if got := InputsDigest(); got != want {
		t.Errorf("InputsDigest() = %s, want %s (the device run's inputs.safetensors)", got, want)
	}
	for _, c := range Cases() {
		if len(c.X) != c.Rows*c.Cols || c.Cols%Group != 0 {
			t.Errorf("case %s: %d values for %d x %d", c.Name, len(c.X), c.Rows, c.Cols)
		}
	}
}

// TestCheckCatchesChanges: a record with one group's codes or one scale
// changed fails Check.
func TestCheckCatchesChanges(t *testing.T) {
	rec, err := Load("../corpus-records/deepgemm.token.cuda.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := rec
	bad.Cases = append([]CaseRecord(nil), rec.Cases...)
	bad.Cases[1].Scales = "3f800000" + bad.Cases[1].Scales[8:]
	if _, err := Check(bad); err == nil || !strings.Contains(err.Error(), "scale 0") {
		t.Errorf("a changed scale: Check = %v, want an error naming scale 0", err)
	}
	bad.Cases = append([]CaseRecord(nil), rec.Cases...)
	bad.Cases[0].CodesSHA256 = strings.Repeat("0", 64)
	bad.Cases[0].GroupDigest = rec.Cases[0].GroupDigest[:8*5] + "00000000" + rec.Cases[0].GroupDigest[8*6:]
	if _, err := Check(bad); err == nil || !strings.Contains(err.Error(), "group 5") {
		t.Errorf("changed codes: Check = %v, want an error naming group 5", err)
	}
	bad = rec
	bad.Recipe = "deepgemm@cpu"
	if _, err := Check(bad); err == nil {
		t.Error("the CUDA record held to deepgemm@cpu: no error")
	}
}
