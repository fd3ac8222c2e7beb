package block

import (
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
