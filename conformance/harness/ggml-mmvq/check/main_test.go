package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

const record = "../records/gemv.mxfp4_q8_1/cuda-h100"

// TestRecord holds the committed H100 record to the reference: ggml's and
// bitexact's GEMV outputs equal the mmvq schedule bit for bit, and both
// q8_1 quantizers' bytes equal the "cuda" profile.
func TestRecord(t *testing.T) {
	r, err := run(record)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range r.quant {
		if d != 0 {
			t.Errorf("%s q8_1: %d of %d blocks differ from profile cuda", name, d, nb)
		}
	}
	for _, name := range []string{"y_ggml.f32 mmvq", "y_ours.f32 mmvq", "y_ggml.f32 mmvq-nofma", "y_ours.f32 mmvq-nofma"} {
		d, ok := r.gemv[name]
		if !ok || d != 0 {
			t.Errorf("%s: %d of %d outputs differ (present %v)", name, d, n, ok)
		}
	}
}

// TestRecordDetectsFlip flips the last bit of one output and of one q8_1
// byte in a copy of the record: check must count exactly that output and
// that block.
func TestRecordDetectsFlip(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"x.f32", "act_ggml.q8_1", "act_ours.q8_1", "y_ggml.f32", "y_ours.f32"} {
		b, err := os.ReadFile(filepath.Join(record, f))
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case "y_ours.f32":
			v := binary.LittleEndian.Uint32(b[4*777:])
			binary.LittleEndian.PutUint32(b[4*777:], v^1)
		case "act_ours.q8_1":
			b[36*5+9] ^= 1
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := run(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.quant["ours"] != 1 || r.quant["ggml"] != 0 {
		t.Errorf("q8_1 blocks differing: ours %d, ggml %d; want 1, 0", r.quant["ours"], r.quant["ggml"])
	}
	if r.gemv["y_ours.f32 mmvq"] != 1 || r.gemv["y_ggml.f32 mmvq"] != 0 {
		t.Errorf("outputs differing: ours %d, ggml %d; want 1, 0", r.gemv["y_ours.f32 mmvq"], r.gemv["y_ggml.f32 mmvq"])
	}
}

// TestRecordWrongInputs: outputs from other inputs are refused, not compared.
func TestRecordWrongInputs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.f32"), make([]byte, 4*k), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(dir); err == nil {
		t.Fatal("run accepted an x.f32 that is not the generator's")
	}
	if _, err := run(t.TempDir()); err == nil {
		t.Fatal("run accepted an empty directory")
	}
}
