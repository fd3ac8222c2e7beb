package main

import (
	"context"
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
  certify --backend cuda --ptx FILE --kernel NAME --abi ABI [--profile P]
      loads a third-party PTX kernel through the CUDA harness (build tag
      cuda) and runs it on the suite of its ABI; unary ABIs run all 2^32
      float32 inputs against the exhaustive Merkle digests.

The certificate (JSON, Markdown, JUnit XML under --cert-out) records the
digests, per-case and per-profile verdicts, the first mismatches decoded
field by field and the diagnosed bug class. Exit status 0: conforms (to the
claimed profile, or to some profile when none is claimed); 1: mismatch; 2:
bad usage or bad input (malformed or truncated results, wrong dtypes or
shapes, missing tensors).`

// vendorFlags are certify's flags for vendor certification.
type vendorFlags struct {
	suite, results, certOut, tasks   string
	backend, ptx, kernel, abi, claim string
	maxMismatches, sample, device    int
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
	return v
}

func (v *vendorFlags) active() bool {
	return v.suite != "" || v.results != "" || v.backend != "" || v.ptx != "" || v.kernel != "" || v.abi != ""
}

func runVendorCertify(ctx context.Context, v *vendorFlags, dir string, stdout, stderr io.Writer) int {
	set, fsys, err := goldenFS(dir)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
	md, err := suite.ManifestDigest(fsys)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
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
	r, err := results.Read(v.results, s, &results.Options{AllowPartial: v.tasks != ""})
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
	c, err := certificate.Build(certificate.Input{Suite: s, Set: set, GoldenSHA256: md, ReferenceWasm: wasm.ModuleDigest(),
		Backend: "results", Implementation: r.Manifest.Implementation, Platform: r.Manifest.Platform, Claimed: r.Manifest.Profile,
		Outputs: outputs, Files: r.Files, Missing: missing, MaxMismatches: v.maxMismatches})
	if err != nil {
		fmt.Fprintf(stderr, "bitexact certify: %v\n", err)
		return exitUsage
	}
	return reportCertificate(c, v.certOut, stdout, stderr)
}

// reportCertificate prints the certificate's summary, writes it and
// returns the exit status.
func reportCertificate(c *certificate.Certificate, out string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "suite %s (golden %s), %s\n", c.Suite, c.SuiteVersion, c.Implementation)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nprofile\tverdict\tdiffering elements\ttasks\n")
	for _, p := range c.Profiles {
		vd := "differs"
		if p.Conforms {
			vd = "conforms"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\n", p.Profile, vd, p.Mismatches, p.Tasks, p.TasksTotal)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	for _, cs := range c.Cases {
		if cs.Result == "n/a" {
			fmt.Fprintf(stdout, "n/a  %s: the golden set has no case of profile %s for this task\n", cs.Task, cs.Profile)
		}
		if cs.Result != "fail" {
			continue
		}
		fmt.Fprintf(stdout, "FAIL %s (%s): %d of %d elements differ\n", cs.Task, cs.Case, cs.Mismatches, cs.Elements)
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
	fmt.Fprintf(stdout, "%s\n", c.VerdictText())
	if out != "" {
		if err := c.WriteDir(out); err != nil {
			fmt.Fprintf(stderr, "bitexact certify: writing the certificate: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "certificate written to %s (%s, %s, %s)\n", out, certificate.JSONFile, certificate.MarkdownFile, certificate.JUnitFile)
	}
	if !c.Valid {
		fmt.Fprintf(stdout, "note: not valid for certification: %s\n", c.InvalidReason)
	}
	if !c.Conforms {
		return exitMismatch
	}
	return exitOK
}
