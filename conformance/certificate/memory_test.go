package certificate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/internal/golden/strictjson"
)

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc:
// every allocation, garbage included, so the figure does not depend on
// when the collector runs).
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// maxAllocRatio bounds what parsing and verifying a certificate of n
// bytes allocates, as a multiple of n: the file's bytes, one string copy
// of them walked by the checks, the decoded certificate (at most
// maxFootprint) and the re-encodings Verify digests and signs.
const maxAllocRatio = 16

// TestParseMemory: a certificate costs a small multiple of its size to
// parse and verify, whatever its shape. Decoding through generic trees, a
// document of many small objects or values took hundreds of times its
// size (2.1 GB for one just under the 256 MiB cap).
func TestParseMemory(t *testing.T) {
	_, ctx := failing(t, "k")
	set, s, out := e4m3(t, "nosat")
	// Every mismatch decoded: the largest form of an honest certificate.
	c, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Backend: "results",
		Implementation: "k", Claimed: "satfinite", Outputs: out, MaxMismatches: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	honest, _ := c.JSON()
	compact, _ := json.Marshal(c)
	const size = 4 << 20
	// reshape returns c's JSON with edit applied, resealed (so that Verify
	// goes past the digest), grown to about size bytes by grow.
	reshape := func(edit func(c *Certificate, n int)) []byte {
		var cp Certificate
		if err := json.Unmarshal(honest, &cp); err != nil {
			t.Fatal(err)
		}
		edit(&cp, size)
		cp.seal()
		b, err := json.Marshal(&cp)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		// parses: the document is one this package could have written
		// (Verify then runs on it); else Parse refuses it.
		parses bool
	}{
		{"honest, every mismatch decoded", honest, true},
		{"honest, compact", compact, true},
		{"cases repeated", reshape(func(c *Certificate, n int) {
			want := max(2, n/(len(honest)/len(c.Cases)))
			for len(c.Cases) < want {
				c.Cases = append(c.Cases, c.Cases[len(c.Cases)%2])
			}
		}), true},
		{"long positions", reshape(func(c *Certificate, n int) {
			c.Cases[0].First[0].Position = make([]int, n/2)
		}), false},
		{"many missing tasks", reshape(func(c *Certificate, n int) {
			c.Missing = make([]string, n/3)
		}), false},
		{"many backend facts", reshape(func(c *Certificate, n int) {
			c.Extra = map[string]string{}
			for i := 0; i < n/12; i++ {
				c.Extra[fmt.Sprint(i)] = ""
			}
		}), false},
		// json.Marshal writes < as \u003c: six bytes in the digested
		// form for each one in the file.
		{"strings that escape", bytes.ReplaceAll(reshape(func(c *Certificate, n int) {
			lt := strings.Repeat("<", maxText)
			for i := 0; i < n/maxText; i++ {
				c.Missing = append(c.Missing, lt)
			}
		}), []byte(`\u003c`), []byte("<")), false},
		{"many empty mismatches", reshape(func(c *Certificate, n int) {
			c.Cases[0].First = make([]Mismatch, n/100)
		}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var perr, verr error
			a := allocated(func() {
				var c *Certificate
				if c, perr = Parse(tc.doc); perr == nil {
					verr = Verify(c, ctx)
				}
			})
			ratio := float64(a) / float64(len(tc.doc))
			t.Logf("%d bytes: allocated %.1f times that (footprint %.1f); parse: %v; verify: %.100v", len(tc.doc), ratio,
				float64(strictjson.Footprint(tc.doc, &Certificate{}))/float64(len(tc.doc)), perr, verr)
			if ratio > maxAllocRatio {
				t.Errorf("parsing and verifying %d bytes allocated %d bytes, %.1f times the size (at most %d)", len(tc.doc), a, ratio, maxAllocRatio)
			}
			if (perr == nil) != tc.parses {
				t.Errorf("Parse = %v, want parses=%v", perr, tc.parses)
			}
			if bytes.Equal(tc.doc, honest) && verr != nil {
				t.Errorf("the honest certificate does not verify: %v", verr)
			}
		})
	}
}
