package bitexacttest

import (
	"context"
	"fmt"
	"sync"

	"github.com/bitexact/bitexact/conformance/certificate"
	"github.com/bitexact/bitexact/conformance/diagnose"
	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/gate"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/wasm"
)

// goldenSuite is a suite of the embedded golden set, with the digests a
// report names.
type goldenSuite struct {
	set          *golden.Set
	s            *suite.Suite
	manifestSHA  string
	referenceSHA string
}

var defaultSet = sync.OnceValues(golden.Default)

// loadGolden resolves the named suite against the embedded golden set.
func loadGolden(name string) (*goldenSuite, error) {
	set, err := defaultSet()
	if err != nil {
		return nil, fmt.Errorf("bitexacttest: the embedded golden set: %w", err)
	}
	s, err := suite.Resolve(set, name)
	if err != nil {
		return nil, fmt.Errorf("bitexacttest: %w", err)
	}
	return &goldenSuite{set: set, s: s, manifestSHA: certificate.ReleasedGoldenSHA256(), referenceSHA: wasm.ModuleDigest()}, nil
}

// theReference computes the expected outputs the golden set lacks: the
// embedded wasm module, as bitexact certify computes them.
var theReference = gate.Reference()

// certify runs kernel run on every task of the suite under profile p and
// certifies its outputs through gate, the code that runs
// bitexact's own kernels and certify's third-party PTX. max is how many
// mismatches per task it decodes. An error from run is returned as it is;
// others are prefixed with the package name.
func (g *goldenSuite) certify(p string, max int, run func(t gate.Task) (ops.Tensors, error)) (*certificate.Certificate, error) {
	var runErr error
	c, err := gate.Suite(context.Background(), gate.SuiteOptions{
		Set: g.set, Suite: g.s, Profile: p, Reference: theReference,
		Certificate: certificate.Input{GoldenSHA256: g.manifestSHA, ReferenceWasm: g.referenceSHA,
			Backend: "go-test", Implementation: "bitexacttest", MaxMismatches: max},
	}, func(_ context.Context, t gate.Task) (ops.Tensors, error) {
		out, err := run(t)
		runErr = err
		return out, err
	})
	if err != nil && err != runErr {
		return nil, fmt.Errorf("bitexacttest: %w", err)
	}
	return c, err
}

// diagTask is the diagnosis data of a golden task: its inputs, the
// golden outputs of every profile, and the observed outputs.
func (g *goldenSuite) diagTask(name, p string, observed ops.Tensors) (diagnose.Task, error) {
	t, ok := g.s.Task(name)
	if !ok {
		return diagnose.Task{}, fmt.Errorf("bitexacttest: no task %s", name)
	}
	in, err := g.set.Inputs(t.Cases[t.Profiles[0]])
	if err != nil {
		return diagnose.Task{}, err
	}
	params, err := g.s.Params(t, p)
	if err != nil {
		return diagnose.Task{}, err
	}
	exp := map[string]ops.Tensors{}
	for _, q := range t.Profiles {
		if exp[q], err = g.set.Expected(t.Cases[q]); err != nil {
			return diagnose.Task{}, err
		}
	}
	ref, ok := exp[p]
	if !ok {
		if ref, err = g.s.Compute(context.Background(), theReference, t, p, in); err != nil {
			return diagnose.Task{}, err
		}
		exp[p] = ref
	}
	return diagnose.Task{Task: t, Params: params, Inputs: in, Reference: ref, Expected: exp, Observed: observed}, nil
}
