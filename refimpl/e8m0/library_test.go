package e8m0

import (
	"math"
	"testing"
)

// TestLibraryScale holds each library scale mode to the codes its record
// shows on the amax values where the libraries part from the four rules
// (conformance/harness/*/records/e8m0-scale).
func TestLibraryScale(t *testing.T) {
	nan := f32bits(0x7FC00000)
	for _, c := range []struct {
		name string
		mode ScaleMode
		amax float32
		want uint8
	}{
		{"torchao 0.17 floor: Inf is exponent 128", TorchAO017Floor, inf, 253},
		{"torchao 0.17 floor: -Inf", TorchAO017Floor, -inf, 253},
		{"torchao 0.17 floor: NaN", TorchAO017Floor, nan, NaN},
		{"torchao 0.17 floor: max float", TorchAO017Floor, math.MaxFloat32, 252},
		{"torchao 0.17 ceil: Inf", TorchAO017Ceil, inf, 253},
		{"torchao 0.17 even: carry to Inf", TorchAO017Even, f32bits(0x7F600000), 253},
		{"torchao 0.17 even: below the carry", TorchAO017Even, f32bits(0x7F5FFFFF), 252},
		{"torchao 0.17 rceil: float32 log2 rounds to -125", TorchAO017RCeil, f32bits(0x01C00001), 1},
		{"torchao 0.17 rceil: exact 6*2^-125", TorchAO017RCeil, 6 * pow2(-125), 2},
		{"torchao 0.17 rceil: Inf clamps to 127", TorchAO017RCeil, inf, 254},
		{"modelopt cpu: float32 log2 of 96.00001/6", ModelOpt5a4242faCPU, f32bits(0x42C00001), 0x83},
		{"modelopt cpu: zero clamps to -127", ModelOpt5a4242faCPU, 0, 0},
		{"modelopt cpu: Inf casts to 0", ModelOpt5a4242faCPU, inf, 0},
		{"modelopt cpu: NaN casts to 0", ModelOpt5a4242faCPU, nan, 0},
		{"modelopt cuda: Inf saturates", ModelOpt5a4242faCUDA, inf, 0xFF},
		{"modelopt cuda: NaN casts to 0", ModelOpt5a4242faCUDA, nan, 0},
		{"modelopt cuda: max float", ModelOpt5a4242faCUDA, math.MaxFloat32, 0xFD},
		{"microxcaling: max float's log2 rounds to 128", Microxcaling7bc41952, math.MaxFloat32, 0xFD},
		{"microxcaling: 1.75*2^127", Microxcaling7bc41952, f32bits(0x7F600000), 0xFC},
		{"microxcaling: Inf is NaN", Microxcaling7bc41952, inf, NaN},
		{"microxcaling: zero is 2^-126, clamped", Microxcaling7bc41952, 0, 0},
		{"microxcaling: 1", Microxcaling7bc41952, 1, 125},
		{"compressed-tensors cpu: carry to Inf, int32(Inf) = INT_MIN", CompressedTensorsAc8e2ba8CPU, f32bits(0x7F600000), 0x7F},
		{"compressed-tensors cuda: carry to Inf, int32(Inf) = INT_MAX", CompressedTensorsAc8e2ba8CUDA, f32bits(0x7F600000), 0x7E},
		{"compressed-tensors cpu: scalar NaN carries to Inf", CompressedTensorsAc8e2ba8CPU, nan, 0x7F},
		{"compressed-tensors cuda: NaN 0x7FFFFFFF carries to -0", CompressedTensorsAc8e2ba8CUDA, nan, 0},
		{"compressed-tensors: 1.75 rounds up", CompressedTensorsAc8e2ba8CPU, 1.75, 126},
		{"compressed-tensors: 1.74 stays", CompressedTensorsAc8e2ba8CPU, nextDown(1.75), 125},
		{"compressed-tensors: zero", CompressedTensorsAc8e2ba8CUDA, 0, 0},
	} {
		if got := SharedScale(c.amax, c.mode, 2, 6); got != c.want {
			t.Errorf("%s: SharedScale(%g (%#08x), %s) = %#x, want %#x", c.name, c.amax, math.Float32bits(c.amax), c.mode.Name, got, c.want)
		}
	}
}

// TestLibraryScaleModesNamed: every library mode is found by
// LookupSharedScaleMode and not by LookupScaleMode (mxfp4.quantize's
// modes), and has a summary and a source.
func TestLibraryScaleModesNamed(t *testing.T) {
	for _, m := range LibraryScaleModes() {
		if got, err := LookupSharedScaleMode(m.Name); err != nil || got.Name != m.Name {
			t.Errorf("LookupSharedScaleMode(%q) = %v, %v", m.Name, got.Name, err)
		}
		if _, err := LookupScaleMode(m.Name); err == nil {
			t.Errorf("LookupScaleMode(%q) found a library mode", m.Name)
		}
		if m.Summary == "" || m.Source == "" {
			t.Errorf("%s: summary or source missing", m.Name)
		}
	}
	if _, err := LookupSharedScaleMode("nope"); err == nil {
		t.Error("LookupSharedScaleMode(nope) found a mode")
	}
}

// TestCasts holds the device casts to the values the records show.
func TestCasts(t *testing.T) {
	for _, c := range []struct {
		name  string
		v     float64
		cuda  bool
		want8 uint8
		want  int32
	}{
		{"cpu +Inf", math.Inf(1), false, 0, math.MinInt32},
		{"cuda +Inf", math.Inf(1), true, 255, math.MaxInt32},
		{"cpu NaN", math.NaN(), false, 0, math.MinInt32},
		{"cuda NaN", math.NaN(), true, 0, 0},
		{"cpu 300 wraps", 300, false, 44, 300},
		{"cuda 300 saturates", 300, true, 255, 300},
		{"cpu -1 wraps", -1, false, 255, -1},
		{"cuda -1 saturates", -1, true, 0, -1},
		{"truncation", 7.9, false, 7, 7},
	} {
		if got := CastUint8(c.v, c.cuda); got != c.want8 {
			t.Errorf("%s: CastUint8 = %d, want %d", c.name, got, c.want8)
		}
		if got := CastInt32(c.v, c.cuda); got != c.want {
			t.Errorf("%s: CastInt32 = %d, want %d", c.name, got, c.want)
		}
	}
}
