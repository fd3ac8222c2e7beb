package suite

import (
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/claim"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Grammar is the claim grammar of the suite's profiles (refimpl/claim):
// its ProfileKeys in their declared order, each taking the values its
// named profiles (the golden cases, refimpl's Choices) take, a key with
// a default optional, the SpecKey also any spec string that fits the
// suite's tasks (a GEMV schedule, Schedule.Fits); a suite with one
// profile key spells a profile by its value alone. A bound-mode suite's
// grammar is its bound models' (ParseBound).
func (s *Suite) Grammar() *claim.Grammar {
	if s.Bound {
		return s.boundGrammar(min(s.MaxK, maxRound16))
	}
	what := "profile of suite " + s.Name
	if len(s.ProfileKeys) == 0 {
		return &claim.Grammar{What: what, Bare: true, Keys: []claim.Key{{Name: "profile", Values: []string{"default"}}}}
	}
	g := &claim.Grammar{What: what, Bare: len(s.ProfileKeys) == 1}
	for _, k := range s.ProfileKeys {
		key := claim.Key{Name: k}
		seen := map[string]bool{}
		for _, p := range s.Profiles {
			pp, _ := s.ProfileParams(p)
			v, ok := pp[k]
			if !ok {
				v = s.Defaults[k]
			}
			if !seen[v] {
				seen[v] = true
				key.Values = append(key.Values, v)
			}
		}
		if d, ok := s.Defaults[k]; ok {
			key.Optional, key.Default = true, d
		}
		if k == s.SpecKey && s.ParseSpec != nil {
			key.Spec = gemv.Grammar()
			key.Check = s.checkSpec
		}
		g.Keys = append(g.Keys, key)
	}
	return g
}

// checkSpec accepts a SpecKey value that no named profile takes: a spec
// string ParseSpec accepts whose counts fit the suite's tasks.
func (s *Suite) checkSpec(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("%q is neither a named %s of the suite nor a spec string (%s)", v, s.SpecKey, gemv.Grammar().Want())
	}
	if err := s.ParseSpec(v); err != nil {
		return err
	}
	sc, err := gemv.Parse(v)
	if err != nil {
		return err
	}
	return sc.Fits(s.MaxK)
}

// CanonicalProfile returns the one spelling of profile p on the suite
// (claim.Grammar.Canonical under Grammar): the name a certificate records
// and the golden cases use. Keys may come in any order and keys with a
// default may be left out; spaces, unknown or repeated keys and values
// the suite does not take are refused, the error naming the key.
//
// A profile claimed under a NaN convention, BASE,nan=CONV (SplitNaN), is
// BASE's canonical spelling followed by the convention.
func (s *Suite) CanonicalProfile(p string) (string, error) {
	if base, conv, ok := s.SplitNaN(p); ok {
		b, err := s.Grammar().Canonical(base)
		if err != nil {
			return "", err
		}
		if _, err := s.parseNaN(b, conv); err != nil {
			return "", err
		}
		return b + "," + ops.NaNParam + "=" + conv, nil
	}
	return s.Grammar().Canonical(p)
}

// reductionLength is the number of elements each output of op sums over,
// read from the shapes of its input tensors (0 for an op that sums
// nothing).
func reductionLength(op string, ts []golden.TensorInfo) int {
	shape := func(name string, rank, dim int) int {
		for _, t := range ts {
			if t.Name == name && len(t.Shape) == rank {
				return t.Shape[dim]
			}
		}
		return 0
	}
	switch op {
	case "gemv.exact":
		return shape("w", 2, 1)
	case "gemv.mxfp4_q8_1":
		return gemv.QK * shape("w", 3, 1)
	case "gemv.awq":
		return shape("x", 1, 0)
	case "gemv.sparse_fp4":
		return 4 * shape("comp", 3, 1)
	}
	return 0
}

// maxReduction is the longest reduction among the tasks' input sets.
func maxReduction(set *golden.Set, op string, tasks []Task) int {
	k := 0
	for _, t := range tasks {
		for _, in := range set.Manifest.Inputs {
			if in.Name == t.Inputs {
				k = max(k, reductionLength(op, in.Tensors))
			}
		}
	}
	return k
}
