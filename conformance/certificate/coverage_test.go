package certificate

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/wasm"
)

var (
	refOnce sync.Once
	refWasm golden.Wasm
	refErr  error
)

// wasmReference is the embedded wasm module as the engine computing
// expected outputs, shared by the tests of the package.
func wasmReference(t *testing.T) golden.Wasm {
	t.Helper()
	refOnce.Do(func() { refWasm, refErr = golden.NewWasm(context.Background(), wasm.Options{}) })
	if refErr != nil {
		t.Fatal(refErr)
	}
	return refWasm
}

// TestEveryTaskChecked walks every suite x profile x task and proves that
// none is left unchecked: a claim of each profile holds every task to
// expected outputs, from the golden case where the set has one and else
// computed by the wasm reference (which must be able to compute it), and
// those outputs are compared: the profile's own outputs pass, and one
// flipped element in every task fails every task with exactly one
// mismatch.
func TestEveryTaskChecked(t *testing.T) {
	ctx := context.Background()
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	ref := wasmReference(t)
	digest := wasm.ModuleDigest()
	pairs, computed, refused := 0, 0, 0
	for _, name := range suite.Names() {
		s, err := suite.Resolve(set, name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Bound {
			// No expected bits: bound_test.go holds every bound suite's
			// tasks to its named models.
			continue
		}
		inputs := map[string]ops.Tensors{}
		for _, tk := range s.Tasks {
			if inputs[tk.Name], err = set.Inputs(tk.Cases[tk.Profiles[0]]); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range s.Profiles {
			t.Run(name+"/"+p, func(t *testing.T) {
				exact := map[string]ops.Tensors{}
				for _, tk := range s.Tasks {
					pairs++
					if gc, ok := tk.Cases[p]; ok {
						if exact[tk.Name], err = set.Expected(gc); err != nil {
							t.Fatal(err)
						}
						if testing.Short() {
							continue
						}
						// The parameters Compute derives select the golden
						// case's outputs: what a computed pair runs is what
						// the set would hold.
						out, err := s.Compute(ctx, ref, tk, p, inputs[tk.Name])
						if err != nil {
							t.Fatalf("task %s: %v", tk.Name, err)
						}
						if d := golden.DiffTensors(exact[tk.Name], out); len(d) > 0 {
							t.Fatalf("task %s: computed outputs differ from golden case %s: %s: %s", tk.Name, gc.Name, d[0].Tensor, d[0].Problem)
						}
						continue
					}
					computed++
					if exact[tk.Name], err = s.Compute(ctx, ref, tk, p, inputs[tk.Name]); err != nil {
						// Only a profile the reference defines for some of
						// the suite's formats may be uncomputable (fp8's
						// ml_dtypes is E5M2's rule): claiming it on the
						// suite is then an invalid claim, never an
						// unchecked task.
						if !strings.Contains(err.Error(), "is defined for") {
							t.Fatalf("profile %s cannot be computed for task %s: %v", p, tk.Name, err)
						}
						_, berr := BuildContext(ctx, Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: digest,
							Backend: "results", Implementation: "walk", Claimed: p, Outputs: exact, Reference: ref})
						var ce *ClaimError
						if !errors.As(berr, &ce) || ce.Task != tk.Name || ce.Profile != p {
							t.Fatalf("claiming %s, which the reference cannot compute for task %s: Build = %v, want a ClaimError naming both", p, tk.Name, berr)
						}
						computed--
						refused++
						return
					}
				}
				in := Input{Suite: s, Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: digest, Backend: "results", Implementation: "walk",
					Claimed: p, Outputs: exact, Reference: ref}
				c, err := BuildContext(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				if !c.Conforms || !c.Valid || len(c.Cases) != len(s.Tasks) {
					t.Fatalf("the profile's own outputs: conforms=%v valid=%v (%s), %d cases of %d tasks", c.Conforms, c.Valid, c.InvalidReason, len(c.Cases), len(s.Tasks))
				}
				for i, cs := range c.Cases {
					tk := s.Tasks[i]
					want := ExpectedComputed
					if _, ok := tk.Cases[p]; ok {
						want = ExpectedGolden
					}
					if cs.Task != tk.Name || cs.Profile != p || cs.Result != "pass" || cs.Expected != want || cs.Elements == 0 {
						t.Errorf("task %s: case %+v, want pass against %s outputs", tk.Name, cs, want)
					}
				}
				for _, pv := range c.Profiles {
					if pv.Profile == p && (pv.Tasks != len(s.Tasks) || pv.TasksTotal != len(s.Tasks)) {
						t.Errorf("profile verdict %+v: not every task counted", pv)
					}
				}
				if err := Verify(c, Context{Set: set, GoldenSHA256: ReleasedGoldenSHA256(), ReferenceWasm: digest}); err != nil {
					t.Errorf("verify: %v", err)
				}

				in.Outputs = map[string]ops.Tensors{}
				for n, ts := range exact {
					in.Outputs[n] = flipOne(ts)
				}
				c, err = BuildContext(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				if c.Conforms {
					t.Errorf("one flipped element per task conforms: %s", c.Verdict)
				}
				for _, cs := range c.Cases {
					if cs.Result != "fail" || cs.Mismatches != 1 {
						t.Errorf("task %s (%s expected outputs): one flipped element gives %s with %d mismatches", cs.Task, cs.Expected, cs.Result, cs.Mismatches)
					}
				}
			})
		}
	}
	t.Logf("%d suite x profile x task triples: %d against golden cases, %d against outputs computed by the reference; %d claims refused as invalid (a profile defined for another format)", pairs, pairs-computed, computed, refused)
	if computed == 0 {
		t.Error("no triple needed a computed expected output: the walk proves nothing about computed ones")
	}
}

// flipOne copies ts with the lowest bit of the first element of its first
// tensor (by name) flipped.
func flipOne(ts ops.Tensors) ops.Tensors {
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	out := ops.Tensors{}
	for _, n := range names {
		out[n] = ts[n]
	}
	x := out[names[0]]
	x.Data = bytes.Clone(x.Data)
	x.Data[0] ^= 1
	out[names[0]] = x
	return out
}
