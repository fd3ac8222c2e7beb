// Package claim is the one parser of claim strings: the "key=value,..."
// spellings that name what a kernel is held to (a suite profile
// "recipe=canonical,swizzle=0", a GEMV schedule
// "chunk=16,lanes=128,...,out=fp32", a bound model
// "mul32=1,round16=0,out=fp32"). Certify, verify-cert, the gate,
// bitexacttest, the demo, the schedule and the bound-model parsers all
// read claims through a Grammar, so one rule holds everywhere:
//
//   - a claim is at most MaxLen bytes of printable ASCII with no space;
//   - it is "key=value" pairs joined by commas, each key at most once;
//   - a key the grammar does not declare is refused, naming the key;
//   - each value is one the key lists (refimpl/ops Choices), or one its
//     Check accepts, or, for a key with a Spec, a nested claim of that
//     grammar (a schedule spec inside a profile);
//   - keys may come in any order and keys with a default may be left out:
//     the claim is then recorded in its canonical spelling, every key in
//     the grammar's declared order with defaults filled in.
//
// Whitespace is refused rather than dropped: which bytes count as space
// is a rule a reader of the recorded claim cannot see, and the error
// gives the canonical spelling to copy. Key order carries no meaning, so
// a reordered claim names the same claim and is recorded canonically.
//
// The declared order, not the alphabetical one, is canonical: it is the
// spelling golden manifests, certificates and committed records already
// use (gemv.Schedule.String, the suites' profile names).
package claim

import (
	"fmt"
	"strings"
)

// MaxLen bounds a claim's length in bytes: far above any claim a grammar
// of this module accepts (the longest schedule spec is under 100 bytes),
// so that parsing costs nothing whatever a results file holds.
const MaxLen = 1024

// Key is one key of a grammar.
type Key struct {
	Name string
	// Values are the accepted values (the op's named choices).
	Values []string
	// Check accepts values Values does not list (a count, a width); nil
	// accepts none. Its error should say what is wanted. With a Spec it
	// also checks a nested claim, in its canonical spelling.
	Check func(v string) error
	// Spec, when set, reads a value containing '=' as a claim of Spec (a
	// GEMV schedule spec as the value of a profile's schedule key), and
	// records it in Spec's canonical spelling. Spec's keys must not be
	// keys of the outer grammar.
	Spec *Grammar
	// Optional keys may be left out. With a Default the canonical
	// spelling records the default; without one it leaves the key out.
	Optional bool
	Default  string
}

// Grammar declares the keys of one kind of claim, in canonical order.
type Grammar struct {
	// What names a claim of this grammar in messages ("schedule",
	// "bound model", "profile of suite nvfp4").
	What string
	Keys []Key
	// Bare grammars have one key, and a claim is its value alone
	// ("satfinite" for a suite whose one profile key is profile), or the
	// key spelled out ("profile=satfinite"), recorded as the value alone.
	Bare bool
}

// Claim is a parsed claim.
type Claim struct {
	// Canonical is the claim's one spelling: the keys in the grammar's
	// order, defaults filled in, nested claims canonical.
	Canonical string
	// Values holds every key's value as Canonical spells it (an optional
	// key without a default that was left out is absent).
	Values map[string]string
}

// Error is a claim refused. Its message names the claim, the key at fault
// where there is one, and the canonical spelling where the claim has one.
type Error struct {
	What, Claim string
	// Key is the key at fault ("" for the claim as a whole).
	Key     string
	Problem string
	// Canonical is the spelling to use instead, when the claim has one
	// (a claim refused only for its spaces).
	Canonical string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q: ", e.What, e.Claim)
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	b.WriteString(e.Problem)
	if e.Canonical != "" {
		fmt.Fprintf(&b, "; write it as %q", e.Canonical)
	}
	return b.String()
}

// Canonical returns the canonical spelling of claim s, or why s is not a
// claim of g.
func (g *Grammar) Canonical(s string) (string, error) {
	c, err := g.Parse(s)
	return c.Canonical, err
}

// Parse reads claim s under g's rule (see the package documentation).
func (g *Grammar) Parse(s string) (Claim, error) {
	fail := func(key, format string, a ...any) (Claim, error) {
		return Claim{}, &Error{What: g.What, Claim: s, Key: key, Problem: fmt.Sprintf(format, a...)}
	}
	if len(s) > MaxLen {
		return Claim{}, &Error{What: g.What, Claim: s[:64] + "...", Problem: fmt.Sprintf("%d bytes, longer than any claim (at most %d)", len(s), MaxLen)}
	}
	if s == "" {
		return fail("", "empty (want %s)", g.Want())
	}
	spaced := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			spaced = true
		case c < 0x21 || c > 0x7e:
			return fail("", "byte %d is %q: a claim is printable ASCII", i, s[i:i+1])
		}
	}
	if spaced {
		e := &Error{What: g.What, Claim: s, Problem: "contains whitespace, which no key or value has"}
		if c, err := g.Parse(strings.Join(strings.Fields(s), "")); err == nil {
			e.Canonical = c.Canonical
		}
		return Claim{}, e
	}
	got := map[string]string{}
	if g.Bare {
		// The one key may be spelled out: "profile=satfinite" is
		// "satfinite".
		got[g.Keys[0].Name] = strings.TrimPrefix(s, g.Keys[0].Name+"=")
	} else {
		var cur *Key // the key whose value the last part extended
		for _, part := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(part, "=")
			if !ok {
				return fail("", "%q is not key=value (want %s)", part, g.Want())
			}
			if k == "" {
				return fail("", "%q has no key (want %s)", part, g.Want())
			}
			key := g.key(k)
			if key == nil {
				// A key of the nested spec the previous key's value
				// opened continues that value.
				if cur != nil && cur.Spec != nil && strings.Contains(got[cur.Name], "=") && cur.Spec.key(k) != nil {
					got[cur.Name] += "," + part
					continue
				}
				return fail(k, "unknown key (keys: %s)", strings.Join(g.names(), ", "))
			}
			if _, dup := got[k]; dup {
				return fail(k, "given twice")
			}
			got[k], cur = v, key
		}
	}
	c := Claim{Values: map[string]string{}}
	parts := make([]string, 0, len(g.Keys))
	for i := range g.Keys {
		k := &g.Keys[i]
		v, ok := got[k.Name]
		switch {
		case !ok && !k.Optional:
			return fail(k.Name, "missing (want %s)", g.Want())
		case !ok && k.Default == "":
			continue
		case !ok:
			v = k.Default
		default:
			var err error
			if v, err = k.value(v); err != nil {
				if ce, isClaim := err.(*Error); isClaim {
					return Claim{}, &Error{What: g.What, Claim: s, Key: k.Name, Problem: ce.Error()}
				}
				return fail(k.Name, "%v", err)
			}
		}
		c.Values[k.Name] = v
		if g.Bare {
			parts = append(parts, v)
		} else {
			parts = append(parts, k.Name+"="+v)
		}
	}
	c.Canonical = strings.Join(parts, ",")
	return c, nil
}

// value checks v as a value of k and returns its canonical spelling.
func (k *Key) value(v string) (string, error) {
	for _, a := range k.Values {
		if v == a {
			return v, nil
		}
	}
	if k.Spec != nil && strings.Contains(v, "=") {
		c, err := k.Spec.Canonical(v)
		if err == nil && k.Check != nil {
			err = k.Check(c)
		}
		return c, err
	}
	if k.Check != nil {
		if err := k.Check(v); err != nil {
			return "", err
		}
		return v, nil
	}
	if v == "" {
		return "", fmt.Errorf("empty value, want one of %s", strings.Join(k.Values, ", "))
	}
	return "", fmt.Errorf("value %q, want one of %s", v, strings.Join(k.Values, ", "))
}

func (g *Grammar) key(name string) *Key {
	for i := range g.Keys {
		if g.Keys[i].Name == name {
			return &g.Keys[i]
		}
	}
	return nil
}

func (g *Grammar) names() []string {
	n := make([]string, len(g.Keys))
	for i, k := range g.Keys {
		n[i] = k.Name
	}
	return n
}

// Want spells the shape of g's claims for messages:
// "chunk=..,lanes=..,...", optional keys in brackets.
func (g *Grammar) Want() string {
	if g.Bare {
		return "a value of " + g.Keys[0].Name
	}
	parts := make([]string, len(g.Keys))
	for i, k := range g.Keys {
		parts[i] = k.Name + "=.."
		if k.Optional {
			parts[i] = "[" + parts[i] + "]"
		}
	}
	return strings.Join(parts, ",")
}

// Count is a Check for a count from lo to hi spelled in canonical
// decimal (no sign, no leading zero), so that one count has one spelling.
func Count(lo, hi int) func(string) error {
	return func(v string) error {
		_, err := ParseCount(v, lo, hi)
		return err
	}
}

// ParseCount reads a count from lo to hi in canonical decimal.
func ParseCount(v string, lo, hi int) (int, error) {
	bad := func() (int, error) {
		return 0, fmt.Errorf("value %q, want a count from %d to %d in decimal", v, lo, hi)
	}
	if v == "" || len(v) > 10 || (len(v) > 1 && v[0] == '0') {
		return bad()
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return bad()
		}
		n = 10*n + int(v[i]-'0')
	}
	if n < lo || n > hi {
		return bad()
	}
	return n, nil
}
