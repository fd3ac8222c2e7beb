package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/wasm"
)

const vendorCertifyHelp = `

Vendor certification (docs/vendor.md):

  certify --suite SUITE --results DIR [--cert-out CERTDIR]
      compares a results directory (written by a harness from the inputs of
      'bitexact export') bit for bit with the golden outputs of every
      profile of the suite.
      A bound-mode suite (gemv-bound, gemv-f16-bound, gemv-mxfp4-bound,
      gemv-awq-bound, gemv-sparse-fp4-bound) instead holds each output to
      the rigorous error bound of the exact product, for any float32
      summation order, under the bound model results.json declares as its
      profile ("mul32=M,round16=R,out=fp32|fp16"): its verdict says
      "within the rigorous bound", never bit-exact.
  certify --backend cuda --ptx FILE --kernel NAME --abi ABI [--profile P]
      loads a third-party PTX kernel through the CUDA harness (build tag
      cuda) and runs it on the suite of its ABI; unary ABIs run all 2^32
      float32 inputs against the exhaustive Merkle digests.

The certificate (JSON, Markdown, JUnit XML under --cert-out) records the
digests, per-case and per-profile verdicts, the first mismatches decoded
field by field and the diagnosed bug class. Every task is held to the
claimed profile: where the golden set has no case of it for a task, the
expected outputs are computed in the same run by the embedded wasm
reference, and the certificate records them as computed, with the module's
digest. --sign-key KEY signs it with an ed25519 key from 'bitexact keygen';
unsigned, it says so, and its content SHA-256 only detects accidental
damage. A golden set given with --dir that is not the released (embedded)
one is named in the verdict and makes the certificate not valid for
certification. Exit status 0: conforms (to the claimed profile on every
task, or to some profile when none is claimed); 1: mismatch; 2: bad usage,
bad input (malformed, truncated or oversized results, a results file that
is not a regular file inside the folder, wrong dtypes or shapes, missing
tensors, an input too large for the reference), or a claimed profile the
reference cannot compute for some task.`

// vendorFlags are certify's flags for vendor certification.
type vendorFlags struct {
	suite, results, certOut, tasks   string
	backend, ptx, kernel, abi, claim string
	maxMismatches, sample, device    int
	signKey                          string
	key                              ed25519.PrivateKey // loaded from signKey
}

func addVendorFlags(fs *flag.FlagSet) *vendorFlags {
	v := &vendorFlags{}
	fs.StringVar(&v.suite, "suite", "", "vendor suite of the results ("+strings.Join(suite.Names(), ", ")+")")
	fs.StringVar(&v.results, "results", "", "results directory to certify (see 'bitexact export')")
	fs.StringVar(&v.certOut, "cert-out", "", "write certificate.json, certificate.md and certificate.junit.xml here")
	fs.StringVar(&v.tasks, "tasks", "", "certify only these comma-separated tasks (a reduced run: not valid for certification)")
	fs.IntVar(&v.maxMismatches, "max-mismatches", certificate.DefaultMaxMismatches, "mismatches decoded per case")
	fs.StringVar(&v.backend, "backend", "", "in-process backend: cuda")
	fs.StringVar(&v.ptx, "ptx", "", "PTX file of the kernel under test (--backend cuda)")
	fs.StringVar(&v.kernel, "kernel", "", "entry point of the kernel in the PTX (--backend cuda)")
	fs.StringVar(&v.abi, "abi", "", "kernel ABI (--backend cuda; see docs/vendor.md)")
	fs.StringVar(&v.claim, "profile", "", "profile the kernel claims (--backend cuda; results directories declare it in results.json)")
	fs.IntVar(&v.sample, "sample", 0, "unary ABIs: run only this many inputs (a sampled run: not valid for certification)")
	fs.IntVar(&v.device, "device", 0, "CUDA device ordinal")
	fs.StringVar(&v.signKey, "sign-key", "", "sign the certificate with this ed25519 private key (PEM, from 'bitexact keygen')")
	return v
}

// prepare checks the flags every vendor route shares and loads the
// signing key, before any long run.
func (v *vendorFlags) prepare(stderr io.Writer) (int, bool) {
	if v.maxMismatches < 0 {
		return usageError(stderr, "certify", "--max-mismatches %d: must be 0 (the default, %d) or more", v.maxMismatches, certificate.DefaultMaxMismatches), false
	}
	if v.signKey != "" {
		k, err := certificate.LoadPrivateKey(v.signKey)
		if err != nil {
			fmt.Fprintf(stderr, "bitexact certify: --sign-key: %v\n", err)
			return exitUsage, false
		}
		if w := certificate.KeyFileWarning(v.signKey); w != "" {
			fmt.Fprintf(stderr, "bitexact certify: warning: --sign-key %s\n", w)
		}
		v.key = k
	}
	return 0, true
}

// sign signs c when a key was given.
func (v *vendorFlags) sign(c *certificate.Certificate, stderr io.Writer) (int, bool) {
	if v.key == nil {
		return 0, true
	}
	if err := c.Sign(v.key); err != nil {
		fmt.Fprintf(stderr, "bitexact certify: signing: %v\n", err)
		return exitUsage, false
	}
	return 0, true
}

func (v *vendorFlags) active() bool {
	return v.suite != "" || v.results != "" || v.backend != "" || v.ptx != "" || v.kernel != "" || v.abi != ""
}

func runVendorCertify(ctx context.Context, v *vendorFlags, dir string, stdout, stderr io.Writer) int {
	if st, ok := v.prepare(stderr); !ok {
		return st
	}
	set, err := loadSet(dir)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
	// The digest of the manifest the set was loaded from, not of the
	// file as it is now.
	md := set.ManifestSHA256()
	switch v.backend {
	case "":
	case "cuda":
		if v.results != "" {
			return usageError(stderr, "certify", "--results and --backend exclude each other")
		}
		return certifyPTX(ctx, v, set, md, stdout, stderr)
	default:
		return usageError(stderr, "certify", "unknown backend %q (backends: cuda)", v.backend)
	}
	if v.ptx != "" || v.kernel != "" || v.abi != "" {
		return usageError(stderr, "certify", "--ptx, --kernel and --abi need --backend cuda")
	}
	if v.suite == "" || v.results == "" {
		return usageError(stderr, "certify", "vendor certification needs both --suite and --results")
	}
	if v.claim != "" {
		return usageError(stderr, "certify", "a results directory declares its profile in results.json, not with --profile")
	}
	s, err := suite.Resolve(set, v.suite)
	if err != nil {
		return usageError(stderr, "certify", "%v", err)
	}
	ref := &lazyWasm{}
	defer ref.Close()
	r, err := results.Read(v.results, s, &results.Options{AllowPartial: v.tasks != "", ClaimLayout: certificate.ClaimLayout(ctx, s, set, ref)})
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: results %s: %v\n", v.results, err)
		return exitUsage
	}
	outputs, missing := r.Outputs, r.Missing
	if v.tasks != "" {
		keep := map[string]bool{}
		for _, t := range strings.Split(v.tasks, ",") {
			t = strings.TrimSpace(t)
			if _, ok := s.Task(t); !ok {
				return usageError(stderr, "certify", "--tasks: unknown task %q", t)
			}
			if _, ok := r.Outputs[t]; !ok {
				return usageError(stderr, "certify", "--tasks: task %q is not in the results", t)
			}
			keep[t] = true
		}
		outputs, missing = map[string]ops.Tensors{}, nil
		for _, t := range s.Tasks {
			if keep[t.Name] {
				outputs[t.Name] = r.Outputs[t.Name]
			} else {
				missing = append(missing, t.Name)
			}
		}
	}
	c, err := certificate.BuildContext(ctx, certificate.Input{Suite: s, Set: set, GoldenSHA256: md, ReferenceWasm: wasm.ModuleDigest(), Reference: ref,
		Backend: "results", Implementation: r.Manifest.Implementation, Platform: r.Manifest.Platform, Claimed: r.Manifest.Profile,
		Outputs: outputs, Files: r.Files, Missing: missing, MaxMismatches: v.maxMismatches})
	if ce := (*certificate.ClaimError)(nil); errors.As(err, &ce) {
		fmt.Fprintf(stderr, "bitexact certify: invalid claim: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
	if st, ok := v.sign(c, stderr); !ok {
		return st
	}
	return reportCertificate(c, v.certOut, stdout, stderr)
}

// printable is results.Printable: s, or s quoted when it holds control
// characters, for the terminal.
func printable(s string) string { return results.Printable(s) }

// reportCertificate prints the certificate's summary, writes it and
// returns the exit status. The verdict comes first and is printed again
// last; strings from the results are printed with control characters
// escaped (results.Printable), so none can move the cursor, rewrite a
// line or fake a verdict.
func reportCertificate(c *certificate.Certificate, out string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "%s\n", results.Printable(c.VerdictText()))
	fmt.Fprintf(stdout, "suite %s (golden %s, %s set), implementation %s\n", c.Suite, c.SuiteVersion, c.GoldenSet, results.Printable(c.Implementation))
	if c.Mode == certificate.ModeBound {
		fmt.Fprintf(stdout, "bound mode: every output is held to the rigorous error bound of the exact product under bound model %s (computed by %s), not compared bit for bit\n", c.Against, c.Cases[0].ComputedBy)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nprofile\tverdict\tdiffering elements\ttasks\n")
	for _, p := range c.Profiles {
		vd := "differs"
		if p.Conforms {
			vd = "conforms"
		}
		computed := ""
		if p.Computed > 0 {
			computed = fmt.Sprintf(" (%d computed)", p.Computed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d%s\n", p.Profile, vd, p.Mismatches, p.Tasks, p.TasksTotal, computed)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	for _, cs := range c.Cases {
		if c.Mode == certificate.ModeBound {
			if cs.Result == "fail" {
				fmt.Fprintf(stdout, "FAIL %s: %d of %d outputs outside the rigorous bound of %s\n", cs.Task, cs.Mismatches, cs.Elements, cs.Profile)
			}
		} else if cs.Expected == certificate.ExpectedComputed {
			fmt.Fprintf(stdout, "computed %s: the golden set has no case of %s for this task; expected outputs computed by %s\n", cs.Task, cs.Profile, cs.ComputedBy)
		}
		if cs.Result != "fail" {
			continue
		}
		src := cs.Case
		if cs.Expected == certificate.ExpectedComputed {
			src = "computed expected outputs"
		}
		if c.Mode != certificate.ModeBound {
			fmt.Fprintf(stdout, "FAIL %s (%s): %d of %d elements differ\n", cs.Task, src, cs.Mismatches, cs.Elements)
		}
		for _, t := range cs.Tensors {
			if t.Layout != "" {
				fmt.Fprintf(stdout, "  tensor %s: %s\n", t.Name, t.Layout)
			}
		}
		for _, m := range cs.First {
			in := ""
			for i, x := range m.Inputs {
				if i > 0 {
					in += ", "
				}
				in += x.String()
			}
			if in != "" {
				in = " input " + in + ":"
			}
			fmt.Fprintf(stdout, "  %s%v%s expected %s; got %s\n", m.Tensor, m.Position, in, m.Expected, m.Got)
		}
	}
	if c.Diagnosis != nil {
		fmt.Fprintf(stdout, "diagnosis: %s\n", c.Diagnosis.Summary())
	}
	fmt.Fprintf(stdout, "%s\n", results.Printable(c.VerdictText()))
	if c.Signature == nil {
		fmt.Fprintf(stdout, "unsigned: the content SHA-256 detects accidental damage only (sign with --sign-key)\n")
	} else if pub, err := c.SignerKey(); err == nil {
		fmt.Fprintf(stdout, "signed with ed25519 key %s\n", certificate.KeyFingerprint(pub))
	}
	if out != "" {
		if err := c.WriteDir(out); err != nil {
			fmt.Fprintf(stderr, "bitexact certify: writing the certificate: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "certificate written to %s (%s, %s, %s)\n", out, certificate.JSONFile, certificate.MarkdownFile, certificate.JUnitFile)
	}
	if !c.Valid {
		fmt.Fprintf(stdout, "note: not valid for certification: %s\n", results.Printable(c.InvalidReason))
	}
	if !c.Conforms {
		return exitMismatch
	}
	return exitOK
}
