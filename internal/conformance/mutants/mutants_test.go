package mutants

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
)

// pendingSuites are suites whose mutants are catalogued before the suite
// itself is merged from a parallel branch (none now): their mutants are skipped
// while the suite is unknown, and the test fails once it is known and
// still listed here.
var pendingSuites = map[string]bool{}

func certify(t *testing.T, set *golden.Set, m Mutant) *certificate.Certificate {
	t.Helper()
	s, err := suite.Resolve(set, m.Suite)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Outputs(s, set)
	if err != nil {
		t.Fatal(err)
	}
	c, err := certificate.Build(certificate.Input{Suite: s, Set: set, Reference: golden.Native{}, Backend: "results", Implementation: "mutant " + m.Name,
		Claimed: m.Claim, Outputs: out})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCatalog: certify rejects every mutant (kill) and the diagnosis
// names its class (diagnosis); a mutant whose bug is outside the library
// must be reported as unexplained. Every suite has a mutant, every mutant
// that is not equivalent to the reference is killed (100%), and at least
// 95% of the killed mutants with a library class are diagnosed with it;
// the figures are logged.
func TestCatalog(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := Catalog()
	if len(cat) < 20 {
		t.Fatalf("catalog has %d mutants, want at least 20", len(cat))
	}
	names := map[string]bool{}
	covered := map[string]bool{}
	killed, killable, diagnosable, diagnosed := 0, 0, 0, 0
	var pending, waiting []string
	for _, m := range cat {
		if names[m.Name] {
			t.Fatalf("duplicate mutant %s", m.Name)
		}
		names[m.Name] = true
		if _, err := suite.Lookup(m.Suite); err != nil && pendingSuites[m.Suite] {
			waiting = append(waiting, m.Name)
			continue
		}
		covered[m.Suite] = true
		if !m.Equivalent && m.NeedsInput == "" {
			killable++
			if m.Class != "" {
				diagnosable++
			}
		}
		t.Run(m.Name, func(t *testing.T) {
			if m.Equivalent && m.Survives == "" {
				t.Errorf("an equivalent mutant must say why it survives")
			}
			c := certify(t, set, m)
			if m.NeedsInput != "" {
				if !c.Conforms {
					t.Errorf("killed now (%s): remove its NeedsInput mark", c.Verdict)
				} else {
					pending = append(pending, m.Name)
					t.Logf("survives until the golden set has: %s", m.NeedsInput)
				}
				return
			}
			k, d := judgeHint(t, c, m.Class, m.Survives, m.Hint)
			if k {
				killed++
			}
			if d {
				diagnosed++
			}
		})
	}
	for _, s := range suite.Names() {
		if !covered[s] {
			t.Errorf("suite %s has no mutant", s)
		}
		if pendingSuites[s] {
			t.Errorf("suite %s is in this build: remove it from pendingSuites", s)
		}
	}
	if len(waiting) > 0 {
		t.Logf("%d mutants of suites not in this build yet (pendingSuites): %v", len(waiting), waiting)
	}
	t.Logf("mutants: %d (%d equivalent, %d awaiting a golden input %v) over %d suites; killed %d of %d (%.0f%%); diagnosed %d of %d with a class in the library (%.1f%%)",
		len(cat)-len(waiting), len(cat)-len(waiting)-killable-len(pending), len(pending), pending, len(covered), killed, killable, 100*float64(killed)/float64(killable),
		diagnosed, diagnosable, 100*float64(diagnosed)/float64(diagnosable))
	if killed != killable {
		t.Errorf("kill rate %d of %d: every mutant that is not equivalent must be killed", killed, killable)
	}
	if 100*diagnosed < 95*diagnosable {
		t.Errorf("diagnosis rate %d of %d is under 95%%", diagnosed, diagnosable)
	}
}

// judgeHint holds a mutant's certificate to the catalog's rules: a
// documented survivor must conform; any other mutant must be rejected with
// a diagnosis that names class (or, where hint is set, a partial hint that
// names hint), or, for class "" (a bug outside the library), with a
// diagnosis that explains nothing. It reports whether the mutant was
// killed and whether its class was named.
func judgeHint(t *testing.T, c *certificate.Certificate, class, survives, hint string) (killed, diagnosed bool) {
	t.Helper()
	if survives != "" {
		if !c.Conforms {
			t.Errorf("documented survivor is now killed (%s): update the catalog", c.Verdict)
		}
		t.Logf("survives (blind spot): %s", survives)
		return false, false
	}
	if c.Conforms {
		t.Errorf("survived: certify says %s", c.Verdict)
		return false, false
	}
	if c.Diagnosis == nil {
		// A bound-mode certificate has no diagnosis: the bound says
		// whether, not how, a kernel is wrong.
		if class != "" {
			t.Errorf("rejected without a diagnosis")
		}
		return true, false
	}
	var got []string
	for _, cl := range c.Diagnosis.Classes {
		got = append(got, cl.Class)
	}
	if p := c.Diagnosis.Partial; p != nil && p.Class != class && (hint == "" || p.Class != hint) {
		// diagnose.likelyCause must not show a hint naming another class.
		t.Errorf("hint %q names %s, not the mutant's class %q", c.Diagnosis.Summary(), p.Class, class)
	}
	if class == "" {
		if c.Diagnosis.Explained {
			t.Errorf("bug outside the library explained by %v", got)
		}
		return true, false
	}
	for _, g := range got {
		if g == class {
			return true, true
		}
	}
	t.Errorf("diagnosis %q does not name class %s (exact classes: %v)", c.Diagnosis.Summary(), class, got)
	return true, false
}

// TestPartialHint holds diagnose.likelyCause to the catalogue from the
// other side: a mutant with a library class whose outputs are also wrong
// in one more element (one bit of the first byte of the first output of
// the first task flipped) is no longer explained exactly, and the hint
// must name its class or a class equivalent to it on the suite.
func TestPartialHint(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	hinted, tried := 0, 0
	for _, m := range Catalog() {
		if m.Class == "" || m.Survives != "" || m.NeedsInput != "" {
			continue
		}
		if _, err := suite.Lookup(m.Suite); err != nil && pendingSuites[m.Suite] {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			s, err := suite.Resolve(set, m.Suite)
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.Outputs(s, set)
			if err != nil {
				t.Fatal(err)
			}
			build := func(out map[string]ops.Tensors) *certificate.Certificate {
				c, err := certificate.Build(certificate.Input{Suite: s, Set: set, Backend: "results", Implementation: "mutant " + m.Name,
					Claimed: m.Claim, Outputs: out})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			c := build(out)
			if c.Diagnosis == nil || !c.Diagnosis.Explained {
				t.Fatalf("not diagnosed: %s", c.Verdict)
			}
			if c.Diagnosis.Mismatches < 4 {
				t.Skipf("%d mismatches: one more wrong element may leave the class under three quarters of them", c.Diagnosis.Mismatches)
			}
			ref, err := set.Expected(s.Tasks[0].Cases[m.Claim])
			if err != nil {
				t.Fatal(err)
			}
			for n, r := range ref {
				if o, ok := out[s.Tasks[0].Name][n]; ok && o.DType != r.DType {
					t.Skipf("output %s is %s where the reference's is %s: such a tensor is scored whole, not by element", n, o.DType, r.DType)
				}
			}
			equiv := map[string]bool{}
			for _, cl := range c.Diagnosis.Classes {
				equiv[cl.Class] = true
			}
			task := s.Tasks[0].Name
			names := make([]string, 0, len(out[task]))
			for n := range out[task] {
				names = append(names, n)
			}
			sort.Strings(names)
			o := out[task][names[0]]
			o.Data = append([]byte{}, o.Data...)
			o.Data[0] ^= 1
			corrupt := map[string]ops.Tensors{}
			for k, v := range out {
				corrupt[k] = v
			}
			corrupt[task] = ops.Tensors{}
			for k, v := range out[task] {
				corrupt[task][k] = v
			}
			corrupt[task][names[0]] = o
			tried++
			d := build(corrupt).Diagnosis
			switch {
			case d == nil || d.Explained:
				t.Errorf("corrupted outputs: diagnosis %+v", d)
			case d.Partial == nil:
				t.Errorf("no hint: %s", d.Summary())
			case !equiv[d.Partial.Class]:
				t.Errorf("hint names %s, not one of %v", d.Partial.Class, c.Diagnosis.Classes)
			default:
				hinted++
			}
		})
	}
	t.Logf("partial hint names the class of %d of %d corrupted mutants", hinted, tried)
}

// TestReferenceConforms: the reference itself, through the same path,
// conforms to every claimed profile (the mutant harness is not what fails).
func TestReferenceConforms(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range Catalog() {
		k := m.Suite + "/" + m.Claim
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, err := suite.Lookup(m.Suite); err != nil && pendingSuites[m.Suite] {
			continue
		}
		if s, err := suite.Resolve(set, m.Suite); err != nil {
			t.Fatal(err)
		} else if _, ok := s.Tasks[0].Cases[m.Claim]; !ok {
			// A bound-mode suite: its profiles are bound models, not
			// cases, and the certificate package holds the reference's
			// schedules to them.
			continue
		}
		ref := Mutant{Name: "reference", Suite: m.Suite, Claim: m.Claim, Run: withParams(opOf(t, set, m), nil)}
		c := certify(t, set, ref)
		if !c.Conforms || c.Diagnosis != nil {
			t.Errorf("%s: reference does not conform: %s", k, c.Verdict)
		}
		if !strings.Contains(c.Verdict, fmt.Sprintf("CONFORMS to claimed profile `%s`", m.Claim)) {
			t.Errorf("%s: verdict %q", k, c.Verdict)
		}
	}
}

func opOf(t *testing.T, set *golden.Set, m Mutant) string {
	s, err := suite.Resolve(set, m.Suite)
	if err != nil {
		t.Fatal(err)
	}
	return s.Op
}

// TestHandWrittenReferences: the hand-written kernels the mutants are
// built from, without their fault, conform to the claimed profile, so a
// mutant differs from the reference by its named bug alone.
func TestHandWrittenReferences(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Mutant{
		{Name: "nvfp4 by hand", Suite: "nvfp4", Claim: "recipe=canonical,swizzle=0", Run: nvfp4ByHand(amaxIgnoreNaN, globalEncode)},
		{Name: "awq dequantize", Suite: "awq-dequantize", Claim: "cuda", Run: awqDequant(awq.OrderAWQ, 0, false, false)},
		{Name: "awq dequantize triton", Suite: "awq-dequantize", Claim: "triton", Run: awqDequant(awq.OrderAWQ, 0, true, false)},
		{Name: "forge", Suite: "awq-quantize", Claim: "forge", Run: awqForge(false, false)},
		{Name: "reorder int16", Suite: "sparse24-reorder", Claim: "default", Run: reorderMeta(false, sparse24.Meta16)},
		{Name: "reorder int32", Suite: "sparse24-reorder-i32", Claim: "default", Run: reorderMeta(true, sparse24.Meta32)},
		{Name: "swizzle", Suite: "nvfp4-swizzle", Claim: "default", Run: swizzle(swizzleExact)},
		{Name: "q8_1 cuda", Suite: "q8_1", Claim: "cuda", Run: q81CUDA(math.Round)},
		{Name: "gemv mxfp4 seq", Suite: "gemv-mxfp4", Claim: "seq", Run: gemvMXFP4Seq(false)},
		{Name: "unswizzle", Suite: "nvfp4-unswizzle", Claim: "default", Run: unswizzle(swizzleExact)},
		{Name: "e2m1 decode formula", Suite: "e2m1-decode", Claim: "default", Run: decodeCodes(func(_ ops.Params, b uint8) float32 {
			if b&6 == 0 { // exponent 0: the subnormal branch
				return fp4.Decode(b)
			}
			return formulaDecode(b&15, 2, 1, 1)
		})},
		{Name: "dense float32 accumulation", Suite: "gemv-bound", Claim: "mul32=1,round16=0,out=fp32", Run: gemvAccumulate(false)},
		{Name: "dense fp16 float32 accumulation", Suite: "gemv-f16-bound", Claim: "mul32=0,round16=0,out=fp32", Run: gemvAccumulate(false)},
	} {
		t.Run(m.Name, func(t *testing.T) {
			if _, err := suite.Lookup(m.Suite); err != nil && pendingSuites[m.Suite] {
				t.Skipf("suite %s is not in this build yet", m.Suite)
			}
			if c := certify(t, set, m); !c.Conforms {
				t.Errorf("does not conform: %s", c.Verdict)
			}
		})
	}
}
