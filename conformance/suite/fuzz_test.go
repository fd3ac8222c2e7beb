package suite

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/claim"
)

var fuzzSuite = sync.OnceValues(func() (*Suite, error) {
	set, err := golden.Default()
	if err != nil {
		return nil, err
	}
	return Resolve(set, "gemv-sparse-fp4-bound")
})

// FuzzParseBound: the bound-model parser never panics; a model it
// accepts is within its caps and its canonical Name parses to the same
// model; every refusal is a *claim.Error naming the claim.
func FuzzParseBound(f *testing.F) {
	for _, s := range []string{
		"mul32=2,round16=1,out=fp16,scale_decode=e4m3fn", "out=fp16,scale_decode=dgx_lut,round16=1,mul32=2",
		"mul32=0,round16=1024,out=fp32,scale_decode=e4m3fn", "mul32=2, round16=1,out=fp16,scale_decode=e4m3fn",
		"mul32=2,round16=1,out=fp16", "mul32=2,mul32=2", "mul32=01,round16=1,out=fp16,scale_decode=e4m3fn",
		"mul32=3,round16=1023,out=fp32,scale_decode=dgx_lut", "mul32=4,round16=0,out=fp32,scale_decode=dgx_lut", ",=,",
	} {
		f.Add(s)
	}
	s, err := fuzzSuite()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := s.ParseBound(p)
		if err != nil {
			var ce *claim.Error
			if !errors.As(err, &ce) {
				t.Fatalf("%q: error %T %v is not a *claim.Error", p, err, err)
			}
			return
		}
		if c.Model.Mul32 < 0 || c.Model.Mul32 > 3 || c.Model.Round16 < 0 || c.Model.Round16 > min(s.MaxK, maxRound16) {
			t.Fatalf("%q: model %+v beyond the caps", p, c.Model)
		}
		if strings.ContainsAny(c.Name, " \t\r\n") || !strings.HasPrefix(c.Name, "mul32=") {
			t.Fatalf("%q: name %q", p, c.Name)
		}
		again, err := s.ParseBound(c.Name)
		if err != nil || again.Name != c.Name || again.Model != c.Model || len(again.Params) != len(c.Params) {
			t.Fatalf("%q: canonical %q reparses to %+v, %v", p, c.Name, again, err)
		}
		if q, err := s.CanonicalProfile(p); err != nil || q != c.Name {
			t.Fatalf("%q: CanonicalProfile %q, %v; ParseBound %q", p, q, err, c.Name)
		}
	})
}
