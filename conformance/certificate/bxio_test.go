package certificate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/conformance/results"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
)

// packE2M1 is a vendor harness in stdlib Python on bxio: it packs each
// task's E2M1 codes two to a byte, element 2i in the low nibble, or, with
// "swap", in the high nibble (a packing bug certify must catch).
const packE2M1 = `
import sys
sys.path.insert(0, sys.argv[1])
import bxio
exp = bxio.Export(sys.argv[2])
swap = sys.argv[4] == "swap"
with bxio.Results(sys.argv[3], exp, implementation="python bxio e2m1-pack (" + sys.argv[4] + ")") as res:
    for task in exp.tasks:
        c = task.tensor("codes")
        b = c.data
        lo, hi = (b[1::2], b[0::2]) if swap else (b[0::2], b[1::2])
        packed = bytes((x & 0xF) | ((y & 0xF) << 4) for x, y in zip(lo, hi))
        res.write(task, {"packed": bxio.Tensor("packed", "U8", c.shape[:-1] + [c.shape[-1] // 2], packed)})
`

// TestBxioHarness runs conformance/harness/bxio.py under python3 on an
// exported suite, as a vendor would, and certifies what it wrote: the
// correct packing conforms, the swapped one is caught and diagnosed. It
// is skipped, saying so, where python3 is missing (CI has it).
func TestBxioHarness(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: bxio.py (conformance/harness) not exercised")
	}
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Resolve(set, "e2m1-pack")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exp := filepath.Join(dir, "export")
	if _, err := s.Export(set, exp); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "pack.py")
	if err := os.WriteFile(script, []byte(packE2M1), 0o644); err != nil {
		t.Fatal(err)
	}
	harness, err := filepath.Abs("../harness")
	if err != nil {
		t.Fatal(err)
	}
	// python3 must not leave a __pycache__ in conformance/harness.
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(py, args...)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		return cmd.CombinedOutput()
	}
	for _, tc := range []struct {
		mode     string
		conforms bool
		class    string
	}{
		{"low-first", true, ""},
		{"swap", false, "nibble-swap"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			out := filepath.Join(dir, "results-"+tc.mode)
			if b, err := run(script, harness, exp, out, tc.mode); err != nil {
				t.Fatalf("python3: %v\n%s", err, b)
			}
			r, err := results.Read(out, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Build(Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: "w", Backend: "results",
				Implementation: r.Manifest.Implementation, Outputs: r.Outputs, Files: r.Files, Missing: r.Missing})
			if err != nil {
				t.Fatal(err)
			}
			if c.Conforms != tc.conforms {
				t.Fatalf("conforms %v: %s", c.Conforms, c.Verdict)
			}
			if tc.class != "" && (c.Diagnosis == nil || !c.Diagnosis.Explained || c.Diagnosis.Classes[0].Class != tc.class) {
				t.Errorf("diagnosis %v, want %s", c.Diagnosis, tc.class)
			}
			// bxio refuses to overwrite a results folder.
			if b, err := run(script, harness, exp, out, tc.mode); err == nil || !strings.Contains(string(b), "exists") {
				t.Errorf("second run into %s: err %v, output %s", out, err, b)
			}
		})
	}
}
