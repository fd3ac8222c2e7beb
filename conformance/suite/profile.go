package suite

import (
	"fmt"
	"strings"
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
