package claim

import (
	"errors"
	"strings"
	"testing"
)

var inner = &Grammar{What: "schedule", Keys: []Key{
	{Name: "chunk", Check: Count(0, 4096)},
	{Name: "out", Values: []string{"fp32", "fp16"}},
	{Name: "nan", Values: []string{"cuda"}, Optional: true},
}}

var outer = &Grammar{What: "profile", Keys: []Key{
	{Name: "schedule", Values: []string{"seq", "mmvq"}, Spec: inner},
	{Name: "scale_decode", Values: []string{"e4m3fn", "dgx_lut"}, Optional: true, Default: "e4m3fn"},
}}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name    string
		g       *Grammar
		in      string
		want    string // canonical, or "" when refused
		wantErr string // a part of the error
	}{
		{"canonical", inner, "chunk=16,out=fp32", "chunk=16,out=fp32", ""},
		{"reordered", inner, "out=fp32,chunk=16", "chunk=16,out=fp32", ""},
		{"optional present", inner, "nan=cuda,chunk=0,out=fp16", "chunk=0,out=fp16,nan=cuda", ""},
		{"space after comma", inner, "chunk=16, out=fp32", "", `contains whitespace, which no key or value has; write it as "chunk=16,out=fp32"`},
		{"space and reorder", inner, " out=fp32 ,chunk=16", "", `write it as "chunk=16,out=fp32"`},
		{"tab", inner, "chunk=16,\tout=fp32", "", "whitespace"},
		{"non-ascii", inner, "chunk=16,out=fp32\u00a0", "", "printable ASCII"},
		{"nul", inner, "chunk=16\x00,out=fp32", "", "printable ASCII"},
		{"duplicate", inner, "chunk=16,chunk=16,out=fp32", "", `key "chunk": given twice`},
		{"unknown key", inner, "chunk=16,out=fp32,lanes=4", "", `key "lanes": unknown key (keys: chunk, out, nan)`},
		{"missing", inner, "chunk=16", "", `key "out": missing`},
		{"bad value", inner, "chunk=16,out=bf16", "", `key "out": value "bf16", want one of fp32, fp16`},
		{"leading zero", inner, "chunk=016,out=fp32", "", "want a count from 0 to 4096"},
		{"signed", inner, "chunk=+16,out=fp32", "", "want a count"},
		{"too large", inner, "chunk=4097,out=fp32", "", "want a count from 0 to 4096"},
		{"huge", inner, "chunk=99999999999999999999,out=fp32", "", "want a count"},
		{"empty", inner, "", "", "empty"},
		{"no equals", inner, "chunk16,out=fp32", "", `"chunk16" is not key=value`},
		{"empty key", inner, "=16,out=fp32", "", `"=16" has no key`},
		{"trailing comma", inner, "chunk=16,out=fp32,", "", `"" is not key=value`},
		{"too long", inner, strings.Repeat("a", MaxLen+1), "", "longer than any claim"},
		{"default filled", outer, "schedule=seq", "schedule=seq,scale_decode=e4m3fn", ""},
		{"nested spec", outer, "schedule=chunk=64,out=fp16,scale_decode=dgx_lut", "schedule=chunk=64,out=fp16,scale_decode=dgx_lut", ""},
		{"nested reordered", outer, "scale_decode=dgx_lut,schedule=out=fp16,chunk=64", "schedule=chunk=64,out=fp16,scale_decode=dgx_lut", ""},
		{"nested bad", outer, "schedule=chunk=64,out=fp8", "", `key "schedule": schedule "chunk=64,out=fp8": key "out": value "fp8"`},
		{"nested key without spec", outer, "schedule=seq,chunk=4", "", `key "chunk": unknown key`},
		{"bare", &Grammar{What: "profile", Bare: true, Keys: []Key{{Name: "profile", Values: []string{"satfinite"}}}}, "satfinite", "satfinite", ""},
		{"bare keyed", &Grammar{What: "profile", Bare: true, Keys: []Key{{Name: "profile", Values: []string{"satfinite"}}}}, "profile=satfinite", "satfinite", ""},
		{"bare keyed twice", &Grammar{What: "profile", Bare: true, Keys: []Key{{Name: "profile", Values: []string{"satfinite"}}}}, "profile=profile=satfinite", "", `value "profile=satfinite"`},
		{"bare spec reordered", &Grammar{What: "profile", Bare: true, Keys: []Key{{Name: "schedule", Values: []string{"seq"}, Spec: inner}}}, "out=fp32,chunk=0", "chunk=0,out=fp32", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.g.Canonical(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Canonical(%q) = %q, %v; want an error containing %q", c.in, got, err, c.wantErr)
				}
				var ce *Error
				if !errors.As(err, &ce) {
					t.Errorf("error %T is not a *claim.Error", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			// The canonical spelling is a fixed point.
			if again, err := c.g.Canonical(got); err != nil || again != got {
				t.Errorf("Canonical(%q) = %q, %v; the canonical spelling must parse to itself", got, again, err)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	c, err := outer.Parse("schedule=out=fp32,chunk=8")
	if err != nil {
		t.Fatal(err)
	}
	if c.Values["schedule"] != "chunk=8,out=fp32" || c.Values["scale_decode"] != "e4m3fn" || len(c.Values) != 2 {
		t.Errorf("Values = %v", c.Values)
	}
	c, err = inner.Parse("chunk=8,out=fp32")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Values["nan"]; ok {
		t.Errorf("an optional key without default left out is absent, got %v", c.Values)
	}
}

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"100", 100, true}, {"101", 0, false}, {"00", 0, false},
		{"-1", 0, false}, {"1e2", 0, false}, {"", 0, false}, {"12345678901", 0, false},
	} {
		n, err := ParseCount(c.in, 0, 100)
		if (err == nil) != c.ok || n != c.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d ok=%v", c.in, n, err, c.want, c.ok)
		}
	}
}
