package certificate

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/golden/strictjson"
)

// VerifyError is a failed re-check; Reason says what does not hold.
type VerifyError struct{ Reason string }

func (e *VerifyError) Error() string { return "certificate rejected: " + e.Reason }

func reject(format string, a ...any) error { return &VerifyError{Reason: fmt.Sprintf(format, a...)} }

// MaxBytes bounds the certificate file verify-cert reads.
const MaxBytes = 256 << 20

// maxText bounds one string of a certificate.
const maxText = 1 << 16

// maxFootprint bounds what decoding a certificate of n bytes may take
// (strictjson.Footprint: the decoded value and its re-encoding, which
// Verify makes to recompute the digest). A certificate this package writes
// takes about 1.5 times its size (TestParseMemory); four times leaves room
// for a compact rewrite of one and still refuses documents shaped to
// decode into far more memory than they occupy.
func maxFootprint(n int) int64 { return 6*int64(n) + 1<<20 }

// Parse decodes a certificate strictly: one JSON object, no unknown,
// duplicated or case-folded keys, every field this package always writes
// present (internal/golden/strictjson), and no string holding invalid UTF-8 or a
// control or format character (which this package never writes, and
// which could change what a terminal shows).
//
// The checks walk the bytes once without building a copy of the
// document, and a document whose decoded form would take more than a few
// times its size is refused before it is decoded: parsing and verifying a
// certificate of n bytes allocates a small multiple of n.
func Parse(b []byte) (*Certificate, error) {
	var c Certificate
	err := strictjson.DecodeBounded(b, &c, strictjson.Options{RequireFields: true, MaxFootprint: maxFootprint(len(b)),
		Text: func(s string) error { return results.CheckText(s, maxText) }})
	if err != nil {
		return nil, reject("malformed JSON: %v", err)
	}
	if c.Format != Format {
		return nil, reject("format %s, this build reads %q", results.Printable(c.Format), Format)
	}
	return &c, nil
}

// Context is what a certificate is re-checked against.
type Context struct {
	Set          *golden.Set
	GoldenSHA256 string
	// ReferenceWasm is this build's module digest.
	ReferenceWasm string
	// ResultsDir, when set, is read again and certified again; the
	// verdicts must come out identical.
	ResultsDir string
	// Reference recomputes the expected outputs the certificate records as
	// computed (Input.Reference), when ResultsDir is set.
	Reference golden.Engine
	// PublicKey, when set, must have signed the certificate.
	PublicKey ed25519.PublicKey
	// Bytes, when set, is the file the certificate was parsed from; a
	// signed certificate must be exactly the bytes Certificate.JSON
	// writes for it (exactBytes).
	Bytes []byte
}

// Verify re-checks c: its content digest, its signature (if any; one by
// ctx.PublicKey if set), the golden set and reference module it names,
// that every task of the suite appears exactly once, that each verdict
// follows from the counts it records and, with a results directory, that
// the files' digests match and a fresh certification of the results
// gives the same certificate: every field but those NotVouched lists comes
// from the fresh run, results.json or this build and is compared
// (implementation, platform, claimed profile and backend facts included).
//
// A *VerifyError means the certificate does not hold; any other error
// that it could not be checked (unreadable results).
//
// The checks run in the order docs/vendor.md lists them, one function per
// group; the first that fails is the reason.
func Verify(c *Certificate, ctx Context) error {
	if err := verifyIntegrity(c, ctx); err != nil {
		return err
	}
	if err := verifyProvenance(c, ctx); err != nil {
		return err
	}
	s, err := suite.Resolve(ctx.Set, c.Suite)
	if err != nil {
		return reject("%v", err)
	}
	if err := checkBound(c, s, ctx.Set); err != nil {
		return err
	}
	if err := verifyClaim(c, s); err != nil {
		return err
	}
	if err := verifyTaskCoverage(c, s); err != nil {
		return err
	}
	for _, cs := range c.Cases {
		if err := verifyCase(c, s, cs); err != nil {
			return err
		}
	}
	if err := verifyVerdicts(c); err != nil {
		return err
	}
	if ctx.ResultsDir == "" {
		return nil
	}
	return verifyResults(c, s, ctx)
}

// verifyIntegrity checks that c is the certificate that was written: its
// content digest matches its content, its signature (if any) is valid
// (and by ctx.PublicKey if set), and a signed certificate is exactly the
// bytes ctx.Bytes holds (when set).
func verifyIntegrity(c *Certificate, ctx Context) error {
	d, err := c.contentDigest()
	if err != nil {
		return err
	}
	if d != c.ContentSHA256 {
		return reject("content digest %s does not match the certificate's content (%s): it was edited after it was written", c.ContentSHA256, d)
	}
	if err := c.verifySignature(ctx.PublicKey); err != nil {
		return err
	}
	return c.exactBytes(ctx.Bytes)
}

// verifyProvenance checks what c says it was certified against: golden_set
// follows from the manifest digest and an unreleased set is never valid,
// max_mismatches is at least 1, and the suite version, golden manifest
// digest and reference module are ctx's (this build's).
func verifyProvenance(c *Certificate, ctx Context) error {
	if g := goldenSetOf(c.GoldenSHA256); c.GoldenSet != g {
		return reject("golden_set %q, but manifest SHA-256 %s is %s", c.GoldenSet, c.GoldenSHA256, g)
	}
	if c.GoldenSet != GoldenReleased && c.Valid {
		return reject("the golden set is not released (%s) but the certificate claims to be valid for certification", c.GoldenSHA256)
	}
	if c.MaxMismatches <= 0 {
		return reject("max_mismatches %d: at least 1 mismatch per case is decoded", c.MaxMismatches)
	}
	if c.SuiteVersion != ctx.Set.Manifest.Suite {
		return reject("suite version %s, the golden set is %s", c.SuiteVersion, ctx.Set.Manifest.Suite)
	}
	if c.GoldenSHA256 != ctx.GoldenSHA256 {
		return reject("golden manifest SHA-256 %s, this golden set's is %s", c.GoldenSHA256, ctx.GoldenSHA256)
	}
	if c.ReferenceWasm != ctx.ReferenceWasm {
		return reject("reference .wasm SHA-256 %s, this build's is %s", c.ReferenceWasm, ctx.ReferenceWasm)
	}
	return nil
}

// verifyClaim checks that a claimed profile is one of suite s, in its
// canonical spelling.
func verifyClaim(c *Certificate, s *suite.Suite) error {
	if c.Claimed != "" {
		if p, err := s.CanonicalProfile(c.Claimed); err != nil || p != c.Claimed {
			return reject("claimed profile %q is not a profile of suite %s in its canonical spelling (%q): %v", c.Claimed, s.Name, p, err)
		}
	}
	return nil
}

// verifyTaskCoverage checks that every task of s appears exactly once:
// as a case or, in a run not valid for certification, listed as missing
// (never both), and no case names a task s does not have.
func verifyTaskCoverage(c *Certificate, s *suite.Suite) error {
	seen := map[string]int{}
	for _, cs := range c.Cases {
		if _, ok := s.Task(cs.Task); !ok {
			return reject("case for unknown task %q", cs.Task)
		}
		seen[cs.Task]++
		if seen[cs.Task] > 1 {
			return reject("task %q appears %d times", cs.Task, seen[cs.Task])
		}
	}
	missing := map[string]bool{}
	for _, m := range c.Missing {
		missing[m] = true
	}
	for _, t := range s.Tasks {
		if seen[t.Name] == 0 && !missing[t.Name] {
			return reject("task %q is missing from the certificate", t.Name)
		}
		if seen[t.Name] > 0 && missing[t.Name] {
			return reject("task %q is both certified and listed as missing", t.Name)
		}
	}
	if len(c.Missing) > 0 && c.Valid {
		return reject("tasks are missing (%s) but the certificate claims to be valid for certification", strings.Join(c.Missing, ", "))
	}
	return nil
}

// verifyCase checks one case: its result follows from its per-tensor
// mismatch counts, no more mismatches are decoded than max_mismatches or
// recorded, it is held to c.Against (never left unchecked), and its
// source of expected outputs agrees with the golden set (verifyExpected).
func verifyCase(c *Certificate, s *suite.Suite, cs Case) error {
	sum := 0
	for _, t := range cs.Tensors {
		sum += t.Mismatches
	}
	if sum != cs.Mismatches {
		return reject("task %s: tensors count %d mismatches, the case records %d", cs.Task, sum, cs.Mismatches)
	}
	if len(cs.First) > c.MaxMismatches || len(cs.First) > cs.Mismatches {
		return reject("task %s: %d mismatches decoded, more than max_mismatches %d or the %d recorded", cs.Task, len(cs.First), c.MaxMismatches, cs.Mismatches)
	}
	switch {
	case cs.Result == "n/a" || cs.Case == NoCase:
		return reject("task %s is not checked against profile %s: every task is held to the profile", cs.Task, cs.Profile)
	case cs.Result == "pass" && cs.Mismatches == 0:
	case cs.Result == "fail" && cs.Mismatches > 0:
	default:
		return reject("task %s: result %q does not follow from %d mismatches against case %s", cs.Task, cs.Result, cs.Mismatches, cs.Case)
	}
	if cs.Profile != c.Against {
		return reject("task %s is held to %s, the certificate to %s", cs.Task, cs.Profile, c.Against)
	}
	return verifyExpected(c, s, cs)
}

// verifyExpected checks that a case's source of expected outputs states
// the golden set: a golden case only where the suite has one for
// c.Against (and it is that case), a computed one only where it has none,
// and in a certificate valid for certification, computed by the reference
// module only.
func verifyExpected(c *Certificate, s *suite.Suite, cs Case) error {
	var gc golden.CaseFile
	hasCase := false
	if t, ok := s.Task(cs.Task); ok {
		gc, hasCase = t.Cases[c.Against]
	}
	switch cs.Expected {
	case ExpectedGolden:
		if !hasCase {
			return reject("task %s: the golden set has no case of profile %s, yet the certificate takes its expected outputs from case %s", cs.Task, c.Against, cs.Case)
		}
		if gc.Name != cs.Case || cs.ComputedBy != "" {
			return reject("task %s: golden case %s is not the suite's case %s for profile %s", cs.Task, cs.Case, gc.Name, c.Against)
		}
	case ExpectedComputed:
		if hasCase {
			return reject("task %s: expected outputs recorded as computed, but the golden set has case %s for profile %s", cs.Task, gc.Name, c.Against)
		}
		if cs.Case != ComputedCase {
			return reject("task %s: computed expected outputs name case %q, want %q", cs.Task, cs.Case, ComputedCase)
		}
		if want := "wasm sha256:" + c.ReferenceWasm; cs.ComputedBy != want && c.Valid {
			return reject("task %s: expected outputs computed by %q, not the reference module %s, but the certificate claims to be valid for certification", cs.Task, cs.ComputedBy, want)
		}
	default:
		return reject("task %s: expected outputs %q are neither golden nor computed", cs.Task, cs.Expected)
	}
	return nil
}

// verifyVerdicts checks that every verdict above the cases follows from
// what c records: each exhaustive sweep's (and a valid certificate swept
// every chunk), the overall one from the cases, the claim is the profile
// held to, each profile's from its counts (the profile held to's from its
// cases), and the verdict line from the profile verdicts.
func verifyVerdicts(c *Certificate) error {
	for _, e := range c.Exhaustive {
		if e.Conforms != (e.Differing == 0 && e.Chunks > 0) {
			return reject("exhaustive %s: conforms=%v does not follow from %d differing chunks", e.Conversion, e.Conforms, e.Differing)
		}
		if e.Chunks < 256 && c.Valid {
			return reject("exhaustive %s swept %d of 256 chunks but the certificate claims to be valid for certification", e.Conversion, e.Chunks)
		}
	}
	if conformsFrom(c) != c.Conforms {
		return reject("conforms=%v does not follow from the case results", c.Conforms)
	}
	if c.Claimed != "" && c.Against != c.Claimed {
		return reject("claimed profile %s but cases are held to %s", c.Claimed, c.Against)
	}
	for _, p := range c.Profiles {
		if err := verifyProfile(c, p); err != nil {
			return err
		}
	}
	if v := verdictLine(c); v != c.Verdict {
		return reject("verdict %q does not follow from the profile verdicts (%q)", c.Verdict, v)
	}
	return nil
}

// verifyProfile checks one profile verdict: it conforms exactly when it
// was checked on some task without a mismatch; the profile held to was
// checked on every case, with the cases' computed count and mismatches;
// any other was computed on no more tasks than it was checked on.
func verifyProfile(c *Certificate, p Profile) error {
	if p.Conforms != (p.Tasks > 0 && p.Mismatches == 0) {
		return reject("profile %s: conforms=%v does not follow from %d mismatches on %d tasks", p.Profile, p.Conforms, p.Mismatches, p.Tasks)
	}
	if p.Profile != c.Against {
		if p.Computed < 0 || p.Computed > p.Tasks {
			return reject("profile %s records %d computed of %d tasks", p.Profile, p.Computed, p.Tasks)
		}
		return nil
	}
	sum, computed := 0, 0
	for _, cs := range c.Cases {
		sum += cs.Mismatches
		if cs.Expected == ExpectedComputed {
			computed++
		}
	}
	if p.Tasks != len(c.Cases) || p.Computed != computed {
		return reject("profile %s is checked on %d tasks (%d computed), its cases are %d (%d computed)", p.Profile, p.Tasks, p.Computed, len(c.Cases), computed)
	}
	if sum != p.Mismatches {
		return reject("profile %s records %d mismatches, its cases %d", p.Profile, p.Mismatches, sum)
	}
	return nil
}

// verifyResults re-checks c against the results in ctx.ResultsDir: a
// results-backend certificate only; the results read (an unreadable
// directory is an error, not a verdict); the identity fields agree with
// results.json and the files with the recorded digests; and a fresh
// certification gives the same certificate (verifyRecertified).
func verifyResults(c *Certificate, s *suite.Suite, ctx Context) error {
	if c.Backend != "results" {
		return reject("backend %s has no results directory to re-check", c.Backend)
	}
	r, err := results.Read(ctx.ResultsDir, s, &results.Options{AllowPartial: !c.Valid,
		ClaimLayout: ClaimLayout(context.Background(), s, ctx.Set, ctx.Reference)})
	if err != nil {
		return fmt.Errorf("results %s: %w", ctx.ResultsDir, err) // unreadable: not a verdict on the certificate
	}
	// The identity fields results.json holds.
	for _, f := range []struct{ name, cert, res string }{
		{"suite", c.Suite, r.Manifest.Suite},
		{"suite version", c.SuiteVersion, r.Manifest.SuiteVersion},
		{"implementation", c.Implementation, r.Manifest.Implementation},
		{"platform", c.Platform, r.Manifest.Platform},
		{"claimed profile", c.Claimed, r.Manifest.Profile},
	} {
		if f.cert != f.res {
			return reject("%s %q, but results.json says %q", f.name, f.cert, f.res)
		}
	}
	if !reflect.DeepEqual(r.Files, c.Files) {
		return reject("results files differ from the certificate's digests: %s", filesDiff(c.Files, r.Files))
	}
	return verifyRecertified(c, s, ctx, r)
}

// verifyRecertified certifies r again and checks that the fresh
// certificate equals c: the profile held to, the cases, the profile
// verdicts, the verdict and the diagnosis (named as such when they
// differ), then every other field but those NotVouched lists.
func verifyRecertified(c *Certificate, s *suite.Suite, ctx Context, r *results.Results) error {
	fresh, err := Build(Input{Suite: s, Set: ctx.Set, GoldenSHA256: ctx.GoldenSHA256, ReferenceWasm: ctx.ReferenceWasm,
		Backend: c.Backend, Implementation: r.Manifest.Implementation, Platform: r.Manifest.Platform, Claimed: r.Manifest.Profile,
		Outputs: r.Outputs, Files: r.Files, Missing: r.Missing, Reference: ctx.Reference, MaxMismatches: c.MaxMismatches})
	if err != nil {
		return err
	}
	switch {
	case fresh.Against != c.Against:
		return reject("results are held to %s, the certificate says %s", fresh.Against, c.Against)
	case !reflect.DeepEqual(fresh.Cases, c.Cases):
		for i := range fresh.Cases {
			if i >= len(c.Cases) || !reflect.DeepEqual(fresh.Cases[i], c.Cases[i]) {
				return reject("task %s: the results give %s with %d mismatches, the certificate records otherwise", fresh.Cases[i].Task, fresh.Cases[i].Result, fresh.Cases[i].Mismatches)
			}
		}
		return reject("case list differs from the results")
	case !reflect.DeepEqual(fresh.Profiles, c.Profiles):
		return reject("per-profile verdicts differ from the results")
	case fresh.Conforms != c.Conforms || fresh.Verdict != c.Verdict:
		return reject("verdict differs from the results: %q", fresh.Verdict)
	case !reflect.DeepEqual(fresh.Diagnosis, c.Diagnosis):
		return reject("diagnosis differs from the results")
	}
	// Every other field must come out the same: nothing but NotVouched is
	// taken from the certificate.
	if k := firstDifferentField(fresh, c); k != "" {
		return reject("field %s differs from a fresh certification of the results", k)
	}
	return nil
}

// Unvouched is a certificate field verify-cert --results does not derive
// from the results, the golden set and this build, with the reason.
type Unvouched struct{ Field, Why string }

// NotVouched lists the top-level fields of a certificate that Verify with
// a results directory does not compare with a fresh certification; every
// other field, backend facts ("extra") and the reason a run is not valid
// included, must come out of the fresh certification identical.
// (docs/vendor.md repeats this list; a test compares them.)
var NotVouched = []Unvouched{
	{"tool", "the build that wrote the certificate; the fresh certification is made by the verifying build, which may differ (the golden set and reference module are compared instead)"},
	{"max_mismatches", "a setting of the run, taken from the certificate: the fresh certification decodes that many mismatches per case, and first_mismatches must then agree"},
	{"content_sha256", "recomputed from the other fields and compared before anything else; it detects damage, not forgery"},
	{"signature", "says who issued the certificate, not what the results are; checked against --pubkey (without it, only that it is a valid signature by the key it names)"},
}

// firstDifferentField names the first top-level JSON field, other than
// those NotVouched lists, in which a and b differ; "" when none does.
func firstDifferentField(a, b *Certificate) string {
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	for _, u := range NotVouched {
		delete(keys, u.Field)
	}
	var diff []string
	for k := range keys {
		if !bytes.Equal(ma[k], mb[k]) {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	if len(diff) == 0 {
		return ""
	}
	return diff[0]
}

func filesDiff(want, got []results.File) string {
	w := map[string]results.File{}
	for _, f := range want {
		w[f.Name] = f
	}
	for _, f := range got {
		o, ok := w[f.Name]
		if !ok {
			return f.Name + " is not in the certificate"
		}
		if o.SHA256 != f.SHA256 {
			return fmt.Sprintf("%s has SHA-256 %s, the certificate records %s", f.Name, f.SHA256, o.SHA256)
		}
		delete(w, f.Name)
	}
	for n := range w {
		return n + " is in the certificate but not in the results"
	}
	return "sizes differ"
}

// ContentDigest is the digest Verify expects in c.ContentSHA256.
func ContentDigest(c *Certificate) (string, error) { return c.contentDigest() }
