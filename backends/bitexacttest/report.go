package bitexacttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/diagnose"
)

// Report is the outcome of a check. String gives it as a go test failure
// prints it: the verdict once, the first differences decoded field by
// field, how the golden inputs fare under every profile of the format,
// the diagnosis, and the digests of the golden set and the reference
// module the expected outputs come from.
type Report struct {
	// Subject is the conversion ("e2m1/nvidia") or the suite and profile
	// ("nvfp4 recipe=canonical,swizzle=0").
	Subject  string
	Conforms bool
	// Sweep says which inputs a unary check covered.
	Sweep string
	// Inputs is the number of inputs a unary check swept (2^32 for every
	// float32) or the output elements a suite check compared;
	// Mismatches how many of them differ.
	Inputs, Mismatches uint64
	// First are the first differences, decoded (MaxReported of them): for
	// a unary check the first input of each distinct pair of expected and
	// observed codes, in bit-pattern order.
	First []Difference
	// Golden is the certificate of the outputs on the golden tasks (nil
	// for fp16 and bf16 inputs, which the golden set does not hold).
	Golden *certificate.Certificate
	// Profiles counts the mismatches against every profile of the
	// format, over every input, for fp16 and bf16 inputs.
	Profiles []ProfileResult
	// Diagnosis names the bug class, when the check fails.
	Diagnosis *diagnose.Diagnosis
	Elapsed   time.Duration
}

// Difference is one differing input (unary) or output element (suite).
type Difference struct {
	// Where is the input ("x = 2.5 (0x40200000)") or the element
	// ("task blocks.edge: scales[1 0]").
	Where     string
	Want, Got certificate.Code
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: want %s, got %s", d.Where, d.Want, d.Got)
}

// ProfileResult is a kernel's count of mismatches against one profile.
type ProfileResult struct {
	Profile    string
	Mismatches int
}

// Verdict is the first line of the report.
func (r *Report) Verdict() string {
	unit := "inputs"
	if r.Sweep == "" {
		unit = "output elements"
	}
	if r.Mismatches == 0 && !r.Conforms {
		// The sweep agreed but the golden tasks did not: the kernel gave
		// other codes for the same inputs on another call.
		return fmt.Sprintf("%s: DOES NOT CONFORM on the golden tasks, though the sweep of %d inputs found no difference (is the kernel deterministic?)", r.Subject, r.Inputs)
	}
	if r.Conforms {
		s := fmt.Sprintf("%s: CONFORMS on %d %s", r.Subject, r.Inputs, unit)
		if r.Sweep != "" {
			s += " (" + r.Sweep + ")"
		}
		return s
	}
	s := fmt.Sprintf("%s: DOES NOT CONFORM: %d of %d %s differ", r.Subject, r.Mismatches, r.Inputs, unit)
	if r.Sweep != "" {
		s += " (" + r.Sweep + ")"
	}
	return s
}

func (r *Report) String() string {
	var b strings.Builder
	b.WriteString(r.Verdict())
	b.WriteByte('\n')
	if len(r.First) > 0 {
		what := "inputs"
		if r.Sweep == "" {
			what = "elements"
		}
		if r.Sweep != "" {
			what += " (the first of each pair of codes)"
		}
		fmt.Fprintf(&b, "first differing %s:\n", what)
		for _, d := range r.First {
			fmt.Fprintf(&b, "  %s\n", d)
		}
		if n := r.Mismatches - uint64(len(r.First)); n > 0 {
			fmt.Fprintf(&b, "  ... and %d more\n", n)
		}
	}
	if line := r.profilesLine(); line != "" {
		b.WriteString(line + "\n")
	}
	if r.Diagnosis != nil {
		fmt.Fprintf(&b, "diagnosis: %s\n", r.Diagnosis.Summary())
	}
	if r.Golden != nil {
		fmt.Fprintf(&b, "golden set %s, manifest sha256:%s; reference wasm sha256:%s\n", r.Golden.SuiteVersion, r.Golden.GoldenSHA256, r.Golden.ReferenceWasm)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// profilesLine says how the outputs fare under each profile.
func (r *Report) profilesLine() string {
	var conf, diff []string
	add := func(p string, n int, note string) {
		if n == 0 {
			conf = append(conf, p+note)
		} else {
			diff = append(diff, fmt.Sprintf("%s on %d%s", p, n, note))
		}
	}
	what := ""
	switch {
	case r.Golden != nil:
		n := 0
		for _, c := range r.Golden.Cases {
			n += c.Elements
		}
		what = fmt.Sprintf("the golden tasks (%d elements)", n)
		for _, p := range r.Golden.Profiles {
			if p.Tasks == 0 {
				continue
			}
			note := ""
			if p.Tasks < p.TasksTotal {
				note = fmt.Sprintf(" (%d of %d tasks)", p.Tasks, p.TasksTotal)
			}
			add(p.Profile, p.Mismatches, note)
		}
	case len(r.Profiles) > 0:
		what = strings.TrimSuffix(r.Sweep, " (2^16)")
		for _, p := range r.Profiles {
			add(p.Profile, p.Mismatches, "")
		}
	default:
		return ""
	}
	var parts []string
	if len(conf) > 0 {
		parts = append(parts, "conforms to "+strings.Join(conf, ", "))
	} else {
		parts = append(parts, "conforms to no profile")
	}
	if len(diff) > 0 {
		parts = append(parts, "differs from "+strings.Join(diff, ", "))
	}
	return "profiles on " + what + ": " + strings.Join(parts, "; ")
}

// report returns the function that hands a check's outcome to t: a usage
// error stops the test, a failing report fails it, a passing one is
// logged.
func report(t testing.TB) func(*Report, error) {
	return func(r *Report, err error) {
		t.Helper()
		switch {
		case err != nil:
			t.Fatal(err)
		case !r.Conforms:
			t.Error(r.String())
		default:
			t.Logf("%s in %s", r.Verdict(), r.Elapsed.Round(time.Millisecond))
		}
	}
}
