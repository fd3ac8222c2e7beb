package block

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/gguf"
)

// TestGGUFDeclared: every GGUF type is one declared format whose size
// is refimpl/gguf's and whose quantizer exists exactly where ggml has one.
func TestGGUFDeclared(t *testing.T) {
	for _, ty := range gguf.Types() {
		f, err := Lookup(ty.String())
		if err != nil {
			t.Fatal(err)
		}
		if f.BlockElems != ty.BlockElems() || f.BlockBytes != ty.BlockBytes() || (f.Quantize != nil) != ty.CanQuantize() {
			t.Errorf("%s: %d/%d quantize %v, gguf says %d/%d %v", f.Name, f.BlockElems, f.BlockBytes, f.Quantize != nil, ty.BlockElems(), ty.BlockBytes(), ty.CanQuantize())
		}
		if err := f.Validate(); err != nil {
			t.Error(err)
		}
	}
	if len(Dots()) != len(gguf.Dots()) {
		t.Errorf("%d dots declared, gguf has %d", len(Dots()), len(gguf.Dots()))
	}
}

// TestValidateNamesGap: an incomplete description is refused with the gap.
func TestValidateNamesGap(t *testing.T) {
	q4k, err := Lookup("q4_K")
	if err != nil {
		t.Fatal(err)
	}
	short := q4k
	short.Layout = short.Layout[:len(short.Layout)-1]
	noProfiles := q4k
	noProfiles.Profiles = nil
	for _, tc := range []struct {
		name string
		f    Format
		want string
	}{
		{"layout short of the block", short, "covers 16 bytes of a 144-byte block"},
		{"no profiles", noProfiles, "has no profiles"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.f.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestInputClassesCover: each input set's classes add up to its values.
func TestInputClassesCover(t *testing.T) {
	for _, f := range Formats() {
		for _, s := range f.Dequantize.Inputs {
			n := 0
			for _, c := range s.Classes {
				n += c.Count
			}
			if got := len(s.Make()) / f.BlockBytes; got != n {
				t.Errorf("%s: %d blocks, classes count %d", s.Name, got, n)
			}
		}
		if f.Quantize != nil {
			for _, s := range f.Quantize.Inputs {
				n := 0
				for _, c := range s.Classes {
					n += c.Count
				}
				if got := len(s.Make()); got != n || got%256 != 0 {
					t.Errorf("%s: %d values, classes count %d", s.Name, got, n)
				}
			}
		}
	}
}

// TestGGUFClassesSeparate: each GGUF quantize input class added to
// separate two builds does separate them (the reason its comment gives):
// the two computations differ on the class's values alone.
func TestGGUFClassesSeparate(t *testing.T) {
	x, classes := ggufQuantizeInputs()
	class := map[string][]float32{}
	off := 0
	for _, c := range classes {
		class[c.Name] = append(class[c.Name], x[off:off+c.Count]...)
		off += c.Count
	}
	ftz := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			if b := math.Float32bits(v); b&0x7f800000 == 0 {
				v = math.Float32frombits(b & 0x80000000)
			}
			y[i] = v
		}
		return y
	}
	same := func(x []float32) []float32 { return x }
	for _, tc := range []struct {
		class string
		typ   gguf.Type
		a, b  gguf.Profile
		// inA transforms the input of a's computation (FTZ or nothing).
		inA func([]float32) []float32
	}{
		{"subnormal-scale", gguf.Q4_0, gguf.FMA, gguf.ARM64, same},
		{"subnormal-scale", gguf.Q8_0, gguf.NoFMA, gguf.ARM64NoFMA, same},
		{"subnormal-scale", gguf.Q5_1, gguf.NoFMA, gguf.ARM64NoFMA, ftz},
		// one super-block: subnormal-scale, then subnormal-codes
		{"subnormal-scale+subnormal-codes", gguf.Q5_K, gguf.NoFMA, gguf.NoFMA, ftz},
		{"subnormal-scale+subnormal-codes", gguf.Q8_K, gguf.NoFMA, gguf.NoFMA, ftz},
		{"lone-subnormal", gguf.Q2_K, gguf.NoFMA, gguf.NoFMA, ftz},
		{"lone-subnormal", gguf.Q8_0, gguf.ARM64, gguf.ARM64, ftz},
		{"lone-subnormal", gguf.TQ2_0, gguf.FMA, gguf.FMA, ftz},
		{"nan-after-max", gguf.Q8_0, gguf.NoFMA, gguf.ARM64NoFMA, same},
		{"nan-after-max", gguf.TQ1_0, gguf.FMA, gguf.ARM64, same},
		{"contraction", gguf.Q4_1, gguf.NoFMA, gguf.FMA, same},
		{"contraction", gguf.Q4_K, gguf.NoFMA, gguf.FMA, same},
		{"contraction", gguf.Q4_K, gguf.FMA, gguf.ARM64, same},
		{"contraction", gguf.Q4_K, gguf.NoFMA, gguf.ARM64, same},
		{"contraction", gguf.Q5_K, gguf.FMA, gguf.ARM64, same},
		{"contraction", gguf.Q6_K, gguf.NoFMA, gguf.FMA, same},
	} {
		name := tc.class + "/" + tc.typ.String() + "/" + tc.a.Name + "-" + tc.b.Name
		t.Run(name, func(t *testing.T) {
			var v []float32
			for _, c := range strings.Split(tc.class, "+") {
				cv, ok := class[c]
				if !ok {
					t.Fatalf("no class %s", c)
				}
				v = append(v, cv...)
			}
			qa, err := gguf.Quantize(tc.typ, tc.inA(v), tc.a)
			if err != nil {
				t.Fatal(err)
			}
			qb, err := gguf.Quantize(tc.typ, v, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(qa, qb) {
				t.Errorf("the two computations agree on every %s value", tc.class)
			}
		})
	}
}
