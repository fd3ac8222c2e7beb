package suite

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/golden"
)

// Listing is one suite as `bitexact export --help` and docs/vendor.md list
// it: the tensors a kernel reads and writes and the profiles it can claim.
type Listing struct {
	Name, Op, Doc string
	// Inputs and Outputs are "name DTYPE" (with the logical format in
	// parentheses where one is recorded), over every task; an output
	// whose dtype depends on the profile lists each ("y F16|F32").
	Inputs, Outputs []string
	// Profiles are the named profiles; Spec, when set, says which spec
	// strings may be claimed besides them.
	Profiles []string
	Spec     string
}

// List resolves every suite against set and describes it.
func List(set *golden.Set) ([]Listing, error) {
	var ls []Listing
	for _, sp := range Specs() {
		s, err := sp.Resolve(set)
		if err != nil {
			return nil, err
		}
		l := Listing{Name: s.Name, Op: s.Op, Doc: s.Doc, Profiles: s.Profiles}
		if s.SpecKey != "" {
			l.Spec = "any " + s.SpecKey + " spec string"
		}
		if s.Bound {
			l.Spec = "any bound model mul32=M,round16=R,out=fp32|fp16" + boundExtra(s.BoundKeys) + " (required: bound mode, not bit-exact)"
		}
		inputs := map[string]golden.InputFile{}
		for _, in := range set.Manifest.Inputs {
			inputs[in.Name] = in
		}
		var inOrder, outOrder []string
		inTypes, outTypes := map[string]map[string]bool{}, map[string]map[string]bool{}
		add := func(order *[]string, types map[string]map[string]bool, ti golden.TensorInfo) {
			if types[ti.Name] == nil {
				types[ti.Name] = map[string]bool{}
				*order = append(*order, ti.Name)
			}
			t := ti.DType
			if ti.Logical != "" {
				t += " (" + ti.Logical + ")"
			}
			types[ti.Name][t] = true
		}
		for _, t := range s.Tasks {
			for _, ti := range inputs[t.Inputs].Tensors {
				add(&inOrder, inTypes, ti)
			}
			for _, p := range t.Profiles {
				if s.Bound {
					break
				}
				for _, ti := range t.Cases[p].Outputs {
					add(&outOrder, outTypes, ti)
				}
			}
			for _, m := range []string{"fp32", "fp16"} {
				if !s.Bound {
					break
				}
				// Any model may declare either output precision.
				model := "mul32=0,round16=0,out=" + m
				for _, c := range s.BoundKeys {
					model += "," + c.Key + "=" + c.Values[0]
				}
				outs, err := s.BoundLayout(t, model)
				if err != nil {
					return nil, err
				}
				add(&outOrder, outTypes, outs[0])
			}
		}
		spell := func(order []string, types map[string]map[string]bool) []string {
			var v []string
			for _, n := range order {
				var ts []string
				for t := range types[n] {
					ts = append(ts, t)
				}
				sort.Strings(ts)
				v = append(v, n+" "+strings.Join(ts, "|"))
			}
			return v
		}
		l.Inputs, l.Outputs = spell(inOrder, inTypes), spell(outOrder, outTypes)
		ls = append(ls, l)
	}
	return ls, nil
}

// ListText is the suite list as `bitexact export --help` prints it.
func ListText(ls []Listing) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "  %s (%s): %s\n", l.Name, l.Op, l.Doc)
		fmt.Fprintf(&b, "      inputs:   %s\n", strings.Join(l.Inputs, ", "))
		fmt.Fprintf(&b, "      outputs:  %s\n", strings.Join(l.Outputs, ", "))
		p := strings.Join(l.Profiles, ", ")
		if l.Spec != "" {
			p += ", or " + l.Spec
		}
		fmt.Fprintf(&b, "      profiles: %s\n", p)
	}
	return b.String()
}

// ListMarkdown is the suite list as a Markdown table (docs/vendor.md).
func ListMarkdown(ls []Listing) string {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	code := func(v []string) string {
		var c []string
		for _, x := range v {
			c = append(c, "`"+esc(x)+"`")
		}
		return strings.Join(c, ", ")
	}
	var b strings.Builder
	b.WriteString("| suite | op | inputs | outputs | profiles | what your kernel computes |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, l := range ls {
		p := code(l.Profiles)
		if l.Spec != "" {
			p += ", or " + l.Spec
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", l.Name, l.Op, code(l.Inputs), code(l.Outputs), p, esc(l.Doc))
	}
	return b.String()
}
