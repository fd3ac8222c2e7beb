package suite

import (
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/refimpl/nanconv"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// CheckProfile reports whether p can be claimed on the suite: a profile
// its Grammar accepts (a named profile, in any key order, defaults left
// out, or for a suite with a SpecKey one whose SpecKey value is a spec
// string that fits the suite's tasks; for a bound-mode suite a bound
// model ParseBound accepts). The error says why not, naming the key.
func (s *Suite) CheckProfile(p string) error {
	if s.Bound {
		if _, err := s.ParseBound(p); err != nil {
			return fmt.Errorf("profile %q is not a bound model of suite %s (named: %s; or any model spelled the same way): %v",
				p, s.Name, strings.Join(s.Profiles, ", "), err)
		}
		return nil
	}
	if _, err := s.CanonicalProfile(p); err != nil {
		if s.SpecKey != "" {
			return fmt.Errorf("profile %q is not a profile of suite %s (profiles: %s, or one with a %s spec string): %v",
				p, s.Name, strings.Join(s.Profiles, ", "), s.SpecKey, err)
		}
		return fmt.Errorf("profile %q is not a profile of suite %s (profiles: %s): %v", p, s.Name, strings.Join(s.Profiles, ", "), err)
	}
	return nil
}

// ParseProfile returns the parameters of profile p, read by the suite's
// Grammar (every profile key, in its canonical spelling): for a profile
// the golden cases do not name, a SpecKey spec string, the parameters
// Compute runs. A bound-mode suite's are its bound model's.
func (s *Suite) ParseProfile(p string) (map[string]string, error) {
	if s.Bound {
		c, err := s.ParseBound(p)
		if err != nil {
			return nil, err
		}
		return c.Params, nil
	}
	if base, conv, ok := s.SplitNaN(p); ok {
		b, err := s.Grammar().Canonical(base)
		if err != nil {
			return nil, err
		}
		return s.parseNaN(b, conv)
	}
	if s.SpecKey == "" || s.ParseSpec == nil {
		return nil, fmt.Errorf("suite %s has no spec-string profiles", s.Name)
	}
	c, err := s.Grammar().Parse(p)
	if err != nil {
		return nil, err
	}
	return c.Values, nil
}

// ProfilesWith is the suite's named profiles, followed by claim when it is
// a spec-string profile (CheckProfile accepts it, HasProfile does not):
// the profiles a certificate gives a verdict for.
func (s *Suite) ProfilesWith(claim string) []string {
	if claim == "" || s.HasProfile(claim) || s.CheckProfile(claim) != nil {
		return s.Profiles
	}
	return append(append([]string{}, s.Profiles...), claim)
}

// NaNAny is the NaN relaxation a profile can claim as BASE,nan=any: the
// outputs are held to BASE's, except that any NaN is accepted where BASE
// has a NaN (never a NaN where BASE has a number, nor a number where it has
// a NaN). It is not bit-exact, and certificates say so.
const NaNAny = "any"

// HasNaN reports whether the suite's op takes the NaN convention parameter
// (ops.NaNParam): its profiles can then be claimed as BASE,nan=CONV.
func (s Spec) HasNaN() bool {
	op, err := ops.Lookup(s.Op)
	if err != nil {
		return false
	}
	_, ok := op.Params[ops.NaNParam]
	return ok && !s.Bound
}

// SplitNaN splits a profile spelled BASE,nan=CONV into BASE and CONV; ok
// is false when p has no such suffix or the suite's op has no NaN
// convention. BASE is a profile name of the suite ("default" for a suite
// without profile keys) or a spec-string profile.
func (s Spec) SplitNaN(p string) (base, conv string, ok bool) {
	if !s.HasNaN() {
		return p, "", false
	}
	i := strings.LastIndex(p, ","+ops.NaNParam+"=")
	if i < 0 {
		return p, "", false
	}
	return p[:i], p[i+len(ops.NaNParam)+2:], true
}

// NaNRelaxed reports whether profile p claims the NaN relaxation (NaNAny).
func (s Spec) NaNRelaxed(p string) bool {
	_, conv, ok := s.SplitNaN(p)
	return ok && conv == NaNAny
}

// parseNaN is ParseProfile of BASE,nan=CONV: BASE's parameters with the
// convention (none for NaNAny, whose expected outputs are BASE's).
func (s *Suite) parseNaN(base, conv string) (map[string]string, error) {
	if conv != NaNAny {
		if _, err := nanconv.Lookup(conv); err != nil {
			return nil, fmt.Errorf("%v, or %s (any NaN where the profile has one; not bit-exact)", err, NaNAny)
		}
		if conv == nanconv.Canonical.Name {
			return nil, fmt.Errorf("nan=%s is the default: spell the profile %q", conv, base)
		}
	}
	pp, ok := s.ProfileParams(base)
	if !ok {
		var err error
		if s.SpecKey == "" || s.ParseSpec == nil {
			return nil, fmt.Errorf("%q is not a profile of the suite (profiles: %s)", base, strings.Join(s.Profiles, ", "))
		}
		if pp, err = s.ParseProfile(base); err != nil {
			return nil, err
		}
	}
	params := map[string]string{}
	for k, v := range pp {
		params[k] = v
	}
	if conv != NaNAny {
		params[ops.NaNParam] = conv
	}
	return params, nil
}
