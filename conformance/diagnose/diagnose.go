// Package diagnose names the bug class behind a mismatch: it recomputes a
// task's outputs under a library of alternative behaviours (the other
// named profiles of the format, variants of the reference's profiles and
// recipes built as data, and small result transforms such as swapped
// nibbles) and reports which alternative reproduces the observed outputs
// bit for bit on every task, or that none does.
//
// An alternative explains the results only when it reproduces every
// output of every task exactly. A partial match is never called an
// explanation; the best one is reported as a hint, with the number of
// mismatching elements it accounts for, only when it is the likely cause
// by the rule of likelyCause.
package diagnose

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Task is one task's data for diagnosis.
type Task struct {
	Task suite.Task
	// Params are the full op parameters of the reference profile's case.
	Params ops.Params
	Inputs ops.Tensors
	// Reference holds the expected outputs of the profile diagnosed
	// against; Expected every profile's.
	Reference ops.Tensors
	Expected  map[string]ops.Tensors
	// Observed are the results under test.
	Observed ops.Tensors
}

// Alternative is one alternative behaviour.
type Alternative struct {
	// Class is a stable identifier ("profile:nosat", "nibble-swap",
	// "ties-away", "element-rule:mul-rcp").
	Class string
	// Doc says in words what the implementation does.
	Doc string
	// Compute returns the alternative's outputs for a task, or ok=false
	// when it does not apply to the task (then it cannot explain it).
	Compute func(s *suite.Suite, t Task) (out ops.Tensors, ok bool, err error)
}

// Match is how well an alternative reproduces the observed outputs.
type Match struct {
	Class string `json:"class"`
	Doc   string `json:"doc"`
	// Exact: the alternative reproduces every output of every task.
	Exact bool `json:"exact"`
	// Explained counts the mismatching elements the alternative
	// reproduces; Broken the matching elements it gets wrong.
	Explained int `json:"explained"`
	Broken    int `json:"broken"`
}

// Diagnosis is the outcome.
type Diagnosis struct {
	// Against is the reference profile the mismatches are counted from.
	Against    string `json:"against"`
	Mismatches int    `json:"mismatches"`
	// Explained is true when at least one alternative is exact.
	Explained bool `json:"explained"`
	// Classes are the exact alternatives, most specific first.
	Classes []Match `json:"classes,omitempty"`
	// Partial is the best inexact alternative (most mismatches explained
	// net of those broken), set only when no alternative is exact and it
	// passes likelyCause.
	Partial *Match `json:"partial,omitempty"`
	// Tried is the number of alternatives evaluated.
	Tried int `json:"tried"`
	// Library is the named profile the results match on the most tasks
	// short of all of them, with the library its source names and the
	// tasks they depart on; nil when no profile matches some tasks but
	// not all.
	Library *LibraryMatch `json:"library,omitempty"`
}

// Summary is one line: "explained by nibble-swap (E2M1 nibbles swapped
// in each byte)" or "no known bug class explains all 12 mismatches".
func (d Diagnosis) Summary() string {
	if d.Explained {
		s := fmt.Sprintf("explained by %s (%s)", d.Classes[0].Class, d.Classes[0].Doc)
		if len(d.Classes) > 1 {
			s += fmt.Sprintf(" and %d equivalent class(es)", len(d.Classes)-1)
		}
		return s
	}
	s := fmt.Sprintf("no known bug class explains all %d mismatches (%d alternatives tried)", d.Mismatches, d.Tried)
	if d.Partial != nil {
		s += fmt.Sprintf("; closest: %s explains %d, breaks %d", d.Partial.Class, d.Partial.Explained, d.Partial.Broken)
	}
	if d.Library != nil {
		s += "; " + d.Library.String()
	}
	return s
}

// Run diagnoses the tasks against profile `against`.
func Run(s *suite.Suite, against string, tasks []Task) (Diagnosis, error) {
	d := Diagnosis{Against: against}
	for _, t := range tasks {
		d.Mismatches += countDiff(t.Reference, t.Observed)
	}
	alts := Alternatives(s, against)
	d.Tried = len(alts)
	var partial []Match
	for _, a := range alts {
		m := Match{Class: a.Class, Doc: a.Doc, Exact: true}
		applies := false
		for _, t := range tasks {
			out, ok, err := a.Compute(s, t)
			if err != nil {
				return d, fmt.Errorf("alternative %s on task %s: %w", a.Class, t.Task.Name, err)
			}
			if !ok {
				m.Exact = false
				continue
			}
			applies = true
			ex, br, eq := score(t.Reference, out, t.Observed)
			m.Explained += ex
			m.Broken += br
			if !eq {
				m.Exact = false
			}
		}
		if !applies {
			continue
		}
		// An alternative that equals the reference cannot explain a
		// mismatch; without mismatches nothing needs explaining.
		if m.Exact && d.Mismatches > 0 {
			d.Classes = append(d.Classes, m)
		} else if m.Explained > 0 {
			partial = append(partial, m)
		}
	}
	d.Explained = len(d.Classes) > 0
	sort.SliceStable(partial, func(i, j int) bool {
		return partial[i].Explained-partial[i].Broken > partial[j].Explained-partial[j].Broken
	})
	if !d.Explained && len(partial) > 0 && likelyCause(partial[0], d.Mismatches) {
		d.Partial = &partial[0]
	}
	if !d.Explained {
		d.Library = libraryMatch(s, tasks)
	}
	return d, nil
}

// likelyCause is the rule for showing an inexact alternative as a hint:
// it reproduces at least three quarters of the mismatching elements and
// changes no element the results got right. An alternative that breaks a correct
// element computes something the kernel does not, and one that accounts
// for a small share of the mismatches (FTZ on the few subnormal inputs of
// a kernel wrong everywhere) says nothing about the rest, so either would
// point at an unrelated class.
func likelyCause(m Match, mismatches int) bool {
	return m.Broken == 0 && m.Explained > 0 && 4*m.Explained >= 3*mismatches
}

// countDiff counts differing elements (in units of each tensor's dtype);
// a tensor of another layout counts all its elements.
func countDiff(want, got ops.Tensors) int {
	n := 0
	for name, w := range want {
		g, ok := got[name]
		sz := w.DType.Size()
		if !ok || g.DType != w.DType || len(g.Data) != len(w.Data) || !sameShape(g.Shape, w.Shape) {
			n += len(w.Data) / sz
			continue
		}
		for i := 0; i+sz <= len(w.Data); i += sz {
			if !bytes.Equal(w.Data[i:i+sz], g.Data[i:i+sz]) {
				n++
			}
		}
	}
	return n
}

// score compares alternative alt with observed got, relative to ref.
func score(ref, alt, got ops.Tensors) (explained, broken int, equal bool) {
	equal = true
	for name, r := range ref {
		g, okg := got[name]
		a, oka := alt[name]
		sz := r.DType.Size()
		if !okg || !oka || a.DType != g.DType || len(a.Data) != len(g.Data) || !sameShape(a.Shape, g.Shape) {
			equal = false
			continue
		}
		if !bytes.Equal(a.Data, g.Data) {
			equal = false
		}
		if r.DType != g.DType || len(r.Data) != len(g.Data) {
			if bytes.Equal(a.Data, g.Data) {
				explained += len(g.Data) / sz
			}
			continue
		}
		for i := 0; i+sz <= len(r.Data); i += sz {
			rg := bytes.Equal(r.Data[i:i+sz], g.Data[i:i+sz])
			ag := bytes.Equal(a.Data[i:i+sz], g.Data[i:i+sz])
			switch {
			case !rg && ag:
				explained++
			case rg && !ag:
				broken++
			}
		}
	}
	for name := range alt {
		if _, ok := ref[name]; !ok {
			equal = false
		}
	}
	return
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
