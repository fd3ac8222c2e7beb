package diagnose

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/nanconv"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// LibraryMatch is the named profile the results match on the most tasks
// without matching on all of them: the library (or rule) they follow, and
// the tasks where they depart from it.
type LibraryMatch struct {
	Profile string `json:"profile"`
	// Library is the implementation the profile's source names
	// (libraryOf), or the profile itself when its source names none.
	Library string `json:"library"`
	// Source is the profile's source, as its refimpl package declares it.
	Source  string   `json:"source,omitempty"`
	Matched int      `json:"tasks_matched"`
	Tasks   int      `json:"tasks"`
	Departs []Depart `json:"departs"`
}

// Depart is a task on which the results depart from a profile.
type Depart struct {
	Task       string `json:"task"`
	Mismatches int    `json:"mismatches"`
}

// String is "torchao (profile recipe=torchao-0.17,swizzle=0) on 13 of 15
// tasks; departs on t1 (1950 elements), t2 (3 elements)".
func (l LibraryMatch) String() string {
	var ds []string
	for _, d := range l.Departs {
		ds = append(ds, fmt.Sprintf("%s (%d elements)", d.Task, d.Mismatches))
	}
	return fmt.Sprintf("matches %s (profile %s) on %d of %d tasks; departs on %s", l.Library, l.Profile, l.Matched, l.Tasks, strings.Join(ds, ", "))
}

// repoRe finds an owner/repository name (with an optional @commit) that
// stands as a word: not part of a longer path.
var repoRe = regexp.MustCompile(`(?:^|[\s(;,])([A-Za-z0-9_-]+/[A-Za-z0-9_.-]+?(?:@[0-9a-f]{7,40})?)(?:[:\s,;)]|$)`)

// versionRe finds a leading "name version" ("torch 2.11", "ml_dtypes 0.6.0").
var versionRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.-]*) v?(\d+\.\d+(?:\.\d+)?)\b`)

// libraryOf names the implementation a profile's source cites: its first
// owner/repository (with its commit, when given), else a leading "name
// version"; "" when it names neither (a specification, an instruction).
func libraryOf(source string) string {
	if m := repoRe.FindStringSubmatch(source); m != nil {
		return m[1]
	}
	if m := versionRe.FindStringSubmatch(source); m != nil {
		return m[1] + " " + m[2]
	}
	return ""
}

// profileSource is the source of profile p of suite s: the Source of the
// first of its parameter values that declares one.
func profileSource(s *suite.Suite, p string) string {
	op, err := ops.Lookup(s.Op)
	if err != nil {
		return ""
	}
	params, ok := s.ProfileParams(p)
	if !ok {
		return ""
	}
	for _, k := range s.ProfileKeys {
		v, ok := params[k]
		if !ok {
			v = s.Defaults[k]
		}
		if c, ok := op.Choice(k, v); ok && c.Source != "" {
			return c.Source
		}
	}
	return ""
}

// libraryMatch finds the named profile the results match on the most
// tasks, when that is at least one task and not every task; nil otherwise
// or with a single task (no task to depart on).
func libraryMatch(s *suite.Suite, tasks []Task) *LibraryMatch {
	if len(tasks) < 2 {
		return nil
	}
	var best *LibraryMatch
	bestElems := 0
	for _, p := range s.Profiles {
		m := LibraryMatch{Profile: p, Tasks: len(tasks)}
		elems := 0
		complete := true
		for _, t := range tasks {
			e, ok := t.Expected[p]
			if !ok {
				complete = false
				break
			}
			if n := countDiff(e, t.Observed); n > 0 {
				m.Departs = append(m.Departs, Depart{t.Task.Name, n})
				elems += n
			} else {
				m.Matched++
			}
		}
		if !complete || m.Matched == 0 || m.Matched == m.Tasks {
			continue
		}
		// Most tasks matched; of equals, fewest elements off.
		if best == nil || m.Matched > best.Matched || (m.Matched == best.Matched && elems < bestElems) {
			m := m
			best, bestElems = &m, elems
		}
	}
	if best != nil {
		best.Source = profileSource(s, best.Profile)
		best.Library = libraryOf(best.Source)
		if best.Library == "" {
			best.Library = "profile " + best.Profile
		}
		sort.SliceStable(best.Departs, func(i, j int) bool { return best.Departs[i].Task < best.Departs[j].Task })
	}
	return best
}

// nanAlternatives are, for a suite whose op takes a NaN convention, the
// profile diagnosed against under each other convention (the results'
// NaNs have another implementation's bits: claim BASE,nan=CONV), and the
// relaxation (every mismatch is a NaN where the profile has a NaN: claim
// BASE,nan=any, which is not bit-exact).
func nanAlternatives(s *suite.Suite, against string) []Alternative {
	if !s.HasNaN() {
		return nil
	}
	base, _, _ := s.SplitNaN(against)
	var alts []Alternative
	for _, c := range nanconv.All()[1:] {
		p := base + "," + ops.NaNParam + "=" + c.Name
		alts = append(alts, Alternative{Class: "nan:" + c.Name,
			Doc: fmt.Sprintf("NaN results under the %s convention: %s; claim profile %s", c.Name, c.Summary, p),
			Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
				out, err := s.Compute(context.Background(), golden.Native{}, t.Task, p, t.Inputs)
				if err != nil {
					return nil, false, nil
				}
				return out, true, nil
			}})
	}
	p := base + "," + ops.NaNParam + "=" + suite.NaNAny
	return append(alts, Alternative{Class: "nan:" + suite.NaNAny,
		Doc: "every mismatch is a NaN's bits where the profile has a NaN (no convention named here reproduces them); claim profile " + p + " (conforms up to NaN bits, not bit-exact)",
		Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
			return nanAny(t.Reference, t.Observed), true, nil
		}})
}

// nanAny is ref with each float element where ref and got are both NaN
// taken from got.
func nanAny(ref, got ops.Tensors) ops.Tensors {
	out := ops.Tensors{}
	for name, r := range ref {
		g, ok := got[name]
		isNaN := nanconv.NaNTest(string(r.DType))
		if !ok || isNaN == nil || g.DType != r.DType || len(g.Data) != len(r.Data) {
			out[name] = r
			continue
		}
		d := append([]byte(nil), r.Data...)
		sz := r.DType.Size()
		for i := 0; i+sz <= len(d); i += sz {
			if isNaN(r.Data[i:i+sz]) && isNaN(g.Data[i:i+sz]) {
				copy(d[i:i+sz], g.Data[i:i+sz])
			}
		}
		r.Data = d
		out[name] = r
	}
	return out
}
