package half

import (
	"math"
	"testing"
)

func TestProfiles(t *testing.T) {
	for _, tc := range []struct {
		name       string
		p          Profile
		in         uint32
		bf16, fp16 uint16
	}{
		// Finite values round the same in both profiles.
		{"rne 1.5", RNE, 0x3fc00000, 0x3fc0, 0x3e00},
		{"canonical 1.5", CanonicalNaN, 0x3fc00000, 0x3fc0, 0x3e00},
		{"canonical -Inf", CanonicalNaN, 0xff800000, 0xff80, 0xfc00},
		// RNE keeps sign and top payload bits, quieted.
		{"rne +qNaN", RNE, 0x7fc00000, 0x7fc0, 0x7e00},
		{"rne -qNaN payload", RNE, 0xffc26b1e, 0xffc2, 0xfe13},
		// canonical-nan: CUDA's conversions write 0x7fff for any NaN
		// (torch 2.11 bf16 on the H100 wrote 0x7fff for these inputs;
		// conformance/harness/torch).
		{"canonical +qNaN", CanonicalNaN, 0x7fc00000, 0x7fff, 0x7fff},
		{"canonical -qNaN", CanonicalNaN, 0xffc00000, 0x7fff, 0x7fff},
		{"canonical sNaN", CanonicalNaN, 0x7f800001, 0x7fff, 0x7fff},
		// sign-nan: ggml_compute_fp32_to_fp16 and Eigen keep the sign and
		// drop the payload (recorded: conformance/harness/ggml, mldtypes).
		{"sign-nan +qNaN payload", SignNaN, 0x7fc26b1e, 0x7fc0, 0x7e00},
		{"sign-nan -sNaN", SignNaN, 0xff800001, 0xffc0, 0xfe00},
		{"sign-nan 65520", SignNaN, 0x477ff000, 0x4780, 0x7c00},
		// satfinite: PTX cvt.rn.satfinite.{f16,bf16}.f32 on the H100.
		{"satfinite 65520", Satfinite, 0x477ff000, 0x4780, 0x7bff},
		{"satfinite 65519.996", Satfinite, 0x477fefff, 0x4780, 0x7bff},
		{"satfinite -Inf", Satfinite, 0xff800000, 0xff7f, 0xfbff},
		{"satfinite bf16 overflow", Satfinite, 0x7f7f8000, 0x7f7f, 0x7bff},
		{"satfinite max float32", Satfinite, 0x7f7fffff, 0x7f7f, 0x7bff},
		{"satfinite -NaN", Satfinite, 0xffc00000, 0x7fff, 0x7fff},
	} {
		x := math.Float32frombits(tc.in)
		if got := tc.p.EncodeBF16(x); got != tc.bf16 {
			t.Errorf("%s: bf16 %#04x, want %#04x", tc.name, got, tc.bf16)
		}
		if got := tc.p.EncodeFP16(x); got != tc.fp16 {
			t.Errorf("%s: fp16 %#04x, want %#04x", tc.name, got, tc.fp16)
		}
	}
	// Single-format profiles: torch's CPU bf16 cast writes 0xFFFF for every
	// NaN; numpy's fp16 cast keeps a signalling NaN signalling.
	for _, tc := range []struct {
		name string
		got  uint16
		want uint16
	}{
		{"torch-cpu +qNaN", TorchCPU.BF16Bits(0x7fc00000), 0xffff},
		{"torch-cpu -sNaN", TorchCPU.BF16Bits(0xff800001), 0xffff},
		{"torch-cpu 1.5", TorchCPU.BF16Bits(0x3fc00000), 0x3fc0},
		{"numpy sNaN low payload", NumPy.FP16Bits(0x7f800001), 0x7c01},
		{"numpy sNaN high payload", NumPy.FP16Bits(0xff812000), 0xfc09},
		{"numpy qNaN", NumPy.FP16Bits(0x7fc00000), 0x7e00},
		{"numpy 65520", NumPy.FP16Bits(0x477ff000), 0x7c00},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %#04x, want %#04x", tc.name, tc.got, tc.want)
		}
	}
	if TorchCPU.Has("fp16") || !TorchCPU.Has("bf16") || NumPy.Has("bf16") || !RNE.Has("fp16") {
		t.Error("Has: torch-cpu is bf16 only, numpy fp16 only, rne both")
	}
	if _, err := LookupProfile("nope"); err == nil {
		t.Error("LookupProfile(nope): no error")
	}
}
