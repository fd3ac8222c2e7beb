package suite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// ExportFormat names the layout of suite.json; readers refuse others.
const ExportFormat = "bitexact-export/1"

// ResultsFormat names the layout of a results directory's results.json.
const ResultsFormat = "bitexact-results/1"

// DescriptionFile is the machine-readable description inside an export.
const DescriptionFile = "suite.json"

// Description is suite.json: everything a vendor harness needs to run the
// suite and write results that certify can read.
type Description struct {
	Format        string            `json:"format"`
	Suite         string            `json:"suite"`
	SuiteVersion  string            `json:"suite_version"`
	GoldenSHA256  string            `json:"golden_manifest_sha256"`
	Op            string            `json:"op"`
	OpDoc         string            `json:"op_doc"`
	Doc           string            `json:"doc"`
	ProfileKeys   []string          `json:"profile_keys"`
	Profiles      []string          `json:"profiles"`
	OpParams      map[string]string `json:"op_params"`
	Tasks         []TaskDescription `json:"tasks"`
	ResultsFormat string            `json:"results_format"`
	// Mode is "bound" for a bound-mode suite (Profiles are then bound
	// models, and no output has expected bits).
	Mode string `json:"mode,omitempty"`
	// Results explains the results directory in one paragraph.
	Results string `json:"results"`
}

// TaskDescription is one task of suite.json.
type TaskDescription struct {
	Name string `json:"name"`
	// Params are the op parameters fixed for this task (besides the
	// profile's).
	Params      map[string]string   `json:"params"`
	InputFile   string              `json:"input_file"`
	InputSHA256 string              `json:"input_sha256"`
	Inputs      []golden.TensorInfo `json:"inputs"`
	ResultFile  string              `json:"result_file"`
	// Expected lists, per profile that has a golden case for the task
	// (certify computes the others when claimed), the golden case and the
	// output tensors the results file must hold (names, dtypes, shapes,
	// logical format).
	Expected []ExpectedDescription `json:"expected"`
}

// ExpectedDescription is the expected output layout of one profile.
type ExpectedDescription struct {
	Profile    string              `json:"profile"`
	Case       string              `json:"case"`
	Params     map[string]string   `json:"params"`
	Outputs    []golden.TensorInfo `json:"outputs"`
	CaseDoc    string              `json:"case_doc"`
	CaseSHA256 string              `json:"expected_sha256"`
}

// Describe builds the description of s.
func (s *Suite) Describe(set *golden.Set, manifestSHA256 string) (*Description, error) {
	op, err := ops.Lookup(s.Op)
	if err != nil {
		return nil, err
	}
	d := &Description{Format: ExportFormat, Suite: s.Name, SuiteVersion: s.Version, GoldenSHA256: manifestSHA256,
		Op: s.Op, OpDoc: op.Doc, Doc: s.Doc, ProfileKeys: append([]string{}, s.ProfileKeys...), Profiles: s.Profiles,
		OpParams: op.Params, ResultsFormat: ResultsFormat,
		Results: "A results directory holds results.json ({\"format\": \"" + ResultsFormat + "\", \"suite\", \"suite_version\", " +
			"\"implementation\", optional \"platform\", optional \"profile\" (the profile the implementation claims), " +
			"\"tasks\": [task names]}) and one safetensors file per task named result_file, holding exactly the output " +
			"tensors of the task (names, dtypes and shapes of one profile's outputs; logical.<name> metadata optional, " +
			"but if present it must match). Every task must be present."}
	if d.ProfileKeys == nil {
		d.ProfileKeys = []string{}
	}
	if s.Bound {
		d.Mode = "bound"
		d.ProfileKeys = []string{}
		for _, k := range s.Grammar().Keys {
			d.ProfileKeys = append(d.ProfileKeys, k.Name)
		}
		d.Results += " This is a bound-mode suite: \"profile\" is required and declares the bound model, spelled " +
			"\"mul32=M,round16=R,out=fp32|fp16\"" + boundExtra(s.BoundKeys) + " (mul32: float32-rounded multiplications on each term's path, " +
			"round16: fp16 roundings on each term's path, out: the output precision; any float32 summation order, fused or not, is covered; " +
			"keys in another order are recorded in this one). A model must describe a plausible kernel: mul32 at most one fewer than a term's factors, " +
			"round16 at most the longest reduction, and a model under which a zero output would be within the bound at half or more of a task's outputs " +
			"that are not tiny by construction is refused (see docs/vendor.md). " +
			"Each task's file holds one tensor y, F32 or F16 as out says. The verdict is within the rigorous bound of the exact product, never bit-exact."
	}
	for _, t := range s.Tasks {
		var in golden.InputFile
		for _, x := range set.Manifest.Inputs {
			if x.Name == t.Inputs {
				in = x
			}
		}
		td := TaskDescription{Name: t.Name, Params: t.Params, InputFile: InputFile(t.Name), InputSHA256: in.SHA256,
			Inputs: in.Tensors, ResultFile: ResultFile(t.Name)}
		for _, p := range t.Profiles {
			if s.Bound {
				break
			}
			c := t.Cases[p]
			td.Expected = append(td.Expected, ExpectedDescription{Profile: p, Case: c.Name, Params: c.Params,
				Outputs: c.Outputs, CaseDoc: c.Description, CaseSHA256: c.SHA256})
		}
		for _, m := range s.Profiles {
			if !s.Bound {
				break
			}
			outs, err := s.BoundLayout(t, m)
			if err != nil {
				return nil, err
			}
			cl, _ := s.ParseBound(m)
			td.Expected = append(td.Expected, ExpectedDescription{Profile: m, Case: "(bound: no expected bits)", Params: cl.Params, Outputs: outs,
				CaseDoc: "each output within the rigorous bound of the exact product under this model"})
		}
		d.Tasks = append(d.Tasks, td)
	}
	return d, nil
}

// ManifestDigest is the SHA-256 of the manifest.json of fsys, read now.
// A loaded set's own digest is Set.ManifestSHA256: the digest of the
// manifest it decoded, which a certificate must name (fsys may have
// changed since).
func ManifestDigest(fsys fs.FS) (string, error) {
	b, err := fs.ReadFile(fsys, golden.ManifestFile)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// Export writes the suite's inputs, suite.json and README.md under dir.
// Input files are the bytes set verified when it was loaded, copied byte
// for byte (their SHA-256 is the manifest's).
func (s *Suite) Export(set *golden.Set, dir string) (*Description, error) {
	d, err := s.Describe(set, set.ManifestSHA256())
	if err != nil {
		return nil, err
	}
	out, err := safeio.OpenOutDir(dir)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	for _, t := range s.Tasks {
		var src string
		for _, x := range set.Manifest.Inputs {
			if x.Name == t.Inputs {
				src = x.File
			}
		}
		b, err := set.File(src)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.Name, err)
		}
		if err := out.WriteFile(InputFile(t.Name), b, 0o644); err != nil {
			return nil, err
		}
	}
	j, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := out.WriteFile(DescriptionFile, append(j, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := out.WriteFile("README.md", readme(d), 0o644); err != nil {
		return nil, err
	}
	return d, nil
}

// boundExtra spells a bound model's family keys for the results text.
func boundExtra(cs []BoundChoice) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, ",%s=%s", c.Key, strings.Join(c.Values, "|"))
	}
	return b.String()
}

func readme(d *Description) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# bitexact suite %s (golden %s)\n\n%s.\n\nOp `%s`: %s\n\n", d.Suite, d.SuiteVersion, d.Doc, d.Op, d.OpDoc)
	if d.Mode == "bound" {
		fmt.Fprintf(&b, "Bound mode: your outputs are held to the rigorous error bound of the exact product, for any float32 summation order, "+
			"under the bound model you declare as results.json's profile; the certificate says within the bound, never bit-exact. "+
			"Named models: %s (or any other spelled the same way).\n\n", "`"+strings.Join(d.Profiles, "`, `")+"`")
	} else {
		fmt.Fprintf(&b, "Profiles (the reference computes each; your results are held against all of them): %s. "+
			"A task lists the profiles the golden set has a case for; a claimed profile it does not list is computed "+
			"for that task by the reference when you certify, so every task is held to your claim.\n\n",
			"`"+strings.Join(d.Profiles, "`, `")+"`")
	}
	fmt.Fprintf(&b, "## Tasks\n\nRun your kernel once per task on the tensors of `input_file` (with the task's fixed parameters) "+
		"and write the outputs to `<results>/<result_file>`.\n\n")
	for _, t := range d.Tasks {
		fmt.Fprintf(&b, "- `%s`: input `%s`", t.Name, t.InputFile)
		for _, in := range t.Inputs {
			fmt.Fprintf(&b, " %s %s%v", in.Name, in.DType, in.Shape)
		}
		if len(t.Params) > 0 {
			fmt.Fprintf(&b, ", params %v", t.Params)
		}
		fmt.Fprintf(&b, " -> `%s`:", t.ResultFile)
		seen := map[string]bool{}
		for _, e := range t.Expected {
			var outs []string
			for _, o := range e.Outputs {
				s := fmt.Sprintf("%s %s%v", o.Name, o.DType, o.Shape)
				if o.Logical != "" {
					s += " (" + o.Logical + ")"
				}
				outs = append(outs, s)
			}
			k := strings.Join(outs, ", ")
			if !seen[k] {
				seen[k] = true
				fmt.Fprintf(&b, " %s [as profile %s]", k, e.Profile)
			}
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprintf(&b, "\n## Results\n\n%s\n\nThen: `bitexact certify --suite %s --results DIR --cert-out CERTDIR`.\n"+
		"Exit status 0: conforms; 1: mismatch (the certificate decodes the first mismatches and names the bug class); "+
		"2: malformed results. See docs/vendor.md.\n", d.Results, d.Suite)
	return b.Bytes()
}
