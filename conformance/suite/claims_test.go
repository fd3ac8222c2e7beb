package suite

import (
	"strings"
	"testing"

	"github.com/bitexact/bitexact/golden"
)

// TestCanonicalProfile: every suite reads its profiles through one
// grammar, and records each in one spelling.
func TestCanonicalProfile(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	const v7 = "chunk=64,lanes=0,group=8,fma=1,acc=fp32,partial=fp16,reduce=strided4,out=fp16"
	for _, c := range []struct {
		name, suite, in, want, wantErr string
	}{
		{"named", "nvfp4", "recipe=canonical,swizzle=0", "recipe=canonical,swizzle=0", ""},
		{"reordered", "nvfp4", "swizzle=1,recipe=canonical", "recipe=canonical,swizzle=1", ""},
		{"default left out", "nvfp4", "recipe=modelopt-5a4242f-cpu", "recipe=modelopt-5a4242f-cpu,swizzle=0", ""},
		{"declared order, not sorted", "ggml-mxfp4", "cast=arm64,log2=log2f", "log2=log2f,cast=arm64", ""},
		{"one key by value", "e4m3", "satfinite", "satfinite", ""},
		{"one key spelled out", "e4m3", "profile=satfinite", "satfinite", ""},
		{"spaces", "nvfp4", "recipe=canonical, swizzle=0", "", `write it as "recipe=canonical,swizzle=0"`},
		{"unknown key", "nvfp4", "recipe=canonical,swizle=0", "", `key "swizle": unknown key (keys: recipe, swizzle)`},
		{"unknown value", "e4m3", "sat", "", `value "sat", want one of nosat, satfinite`},
		{"duplicate", "nvfp4", "recipe=canonical,recipe=canonical", "", `key "recipe": given twice`},
		{"nested spec reordered", "gemv-sparse-fp4", "scale_decode=e4m3fn,schedule=out=fp16,reduce=strided4,partial=fp16,acc=fp32,fma=1,group=8,lanes=0,chunk=64",
			"schedule=" + v7 + ",scale_decode=e4m3fn", ""},
		{"spec beyond the suite", "gemv-sparse-fp4", "schedule=" + strings.Replace(v7, "chunk=64", "chunk=65536", 1), "", "chunk=65536 exceeds 2048"},
		{"bound reordered", "gemv-bound", "out=fp16,mul32=1,round16=0", "mul32=1,round16=0,out=fp16", ""},
		{"bound beyond the reduction", "gemv-bound", "mul32=1,round16=257,out=fp16", "", "want a count from 0 to 256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Resolve(set, c.suite)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.CanonicalProfile(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("CanonicalProfile(%q) = %q, %v; want an error containing %q", c.in, got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("CanonicalProfile(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			if err := s.CheckProfile(c.in); err != nil {
				t.Errorf("CheckProfile(%q): %v", c.in, err)
			}
		})
	}
	// Every named profile is its own canonical spelling.
	for _, name := range Names() {
		s, err := Resolve(set, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Profiles {
			if got, err := s.CanonicalProfile(p); err != nil || got != p {
				t.Errorf("suite %s: named profile %q canonical %q, %v", name, p, got, err)
			}
		}
	}
}
