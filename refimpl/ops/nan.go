package ops

import (
	"github.com/bitexact/bitexact/refimpl/nanconv"
)

// NaNParam is the parameter of every op that outputs floats: the
// convention its NaN results follow (refimpl/nanconv). Its default,
// canonical, is the op's own pinned NaN.
const NaNParam = "nan"

// nanParamDoc is NaNParam's entry in an op's Params.
var nanParamDoc = "NaN convention of the float outputs: canonical (default), cuda, cuda-sign, x86 or propagate (refimpl/nanconv)"

func nanChoices() []Choice {
	return choices(nanconv.All(), func(c nanconv.Convention) Choice { return Choice{c.Name, c.Summary, c.Source} })
}

// withNaN adds the nan parameter, its default and its choices to op.
func withNaN(op Op) Op {
	params := map[string]string{NaNParam: nanParamDoc}
	for k, v := range op.Params {
		params[k] = v
	}
	defaults := Params{NaNParam: nanconv.Canonical.Name}
	for k, v := range op.Defaults {
		defaults[k] = v
	}
	ch := map[string][]Choice{NaNParam: nanChoices()}
	for k, v := range op.Choices {
		ch[k] = v
	}
	op.Params, op.Defaults, op.Choices = params, defaults, ch
	return op
}

// nanConv returns the convention p names (Run fills the default).
func nanConv(p Params) (nanconv.Convention, error) {
	return nanconv.Lookup(p.Get(NaNParam, nanconv.Canonical.Name))
}
