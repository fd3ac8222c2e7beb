package claim

import (
	"strings"
	"testing"
)

var bare = &Grammar{What: "profile", Bare: true, Keys: []Key{{Name: "schedule", Values: []string{"seq", "mmvq"}, Spec: inner}}}

// FuzzCanonical: whatever the input, parsing never panics, a claim that
// parses has a canonical spelling that parses to itself with the same
// values, and every refusal is a *Error.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"chunk=16,out=fp32", "out=fp32,chunk=16,nan=cuda", "chunk=16, out=fp32", "schedule=seq",
		"schedule=chunk=64,out=fp16,scale_decode=dgx_lut", "scale_decode=e4m3fn,schedule=out=fp16,chunk=0",
		"schedule=chunk=1,chunk=2", "=,=,", ",,,", "chunk=016,out=fp32", "a=b=c", "schedule==", "schedule=seq", "schedule=out=fp32,chunk=1", "mmvq",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, g := range []*Grammar{inner, outer, bare} {
			c, err := g.Parse(s)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("%q: error %T %v is not a *Error", s, err, err)
				}
				continue
			}
			if strings.ContainsAny(c.Canonical, " \t\r\n") || len(c.Canonical) > MaxLen {
				t.Fatalf("%q: canonical %q", s, c.Canonical)
			}
			again, err := g.Parse(c.Canonical)
			if err != nil || again.Canonical != c.Canonical || len(again.Values) != len(c.Values) {
				t.Fatalf("%q: canonical %q reparses to %q, %v", s, c.Canonical, again.Canonical, err)
			}
			for k, v := range c.Values {
				if again.Values[k] != v {
					t.Fatalf("%q: key %s: %q then %q", s, k, v, again.Values[k])
				}
			}
		}
	})
}
