package ops

import (
	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ggml"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/sparse24"
)

// Choice is one named value of a parameter that selects a rule where
// implementations differ (a profile, recipe, rounding, scale mode, layout,
// quantizer, kernel or schedule), as its refimpl package declares it.
type Choice struct {
	Name string
	// Summary says in one line what the rule does.
	Summary string
	// Source names the public specification or implementation the rule
	// reproduces; "" where the package's documentation gives it instead
	// (the GEMV schedules).
	Source string
}

// Choice finds the value name of parameter key, or of any parameter of op
// when key is "".
func (op Op) Choice(key, name string) (Choice, bool) {
	for k, cs := range op.Choices {
		if key != "" && k != key {
			continue
		}
		for _, c := range cs {
			if c.Name == name {
				return c, true
			}
		}
	}
	return Choice{}, false
}

// choices builds the Choices of a list of rules.
func choices[T any](list []T, f func(T) Choice) []Choice {
	cs := make([]Choice, len(list))
	for i, v := range list {
		cs[i] = f(v)
	}
	return cs
}

func fp4Choices() []Choice {
	return choices(append(fp4.Profiles(), fp4.GGML), func(p fp4.Profile) Choice { return Choice{p.Name, p.Summary, p.Source} })
}

func fp8Choices() []Choice {
	return choices(fp8.Profiles(), func(p fp8.Profile) Choice { return Choice{p.Name, p.Summary, p.Source} })
}

func halfChoices(format string) []Choice {
	var cs []Choice
	for _, p := range half.Profiles() {
		if p.Has(format) {
			cs = append(cs, Choice{p.Name, p.Summary(format), p.Source})
		}
	}
	return cs
}

func roundingChoices() []Choice {
	return choices(e8m0.Roundings(), func(r e8m0.Rounding) Choice { return Choice{r.Name, r.Summary, r.Source} })
}

func scaleModeChoices() []Choice {
	return choices(e8m0.ScaleModes(), func(m e8m0.ScaleMode) Choice { return Choice{m.Name, m.Summary, m.Source} })
}

// sharedScaleModeChoices are the scale modes and the recorded library
// scale modes (e8m0.shared_scale only).
func sharedScaleModeChoices() []Choice {
	return choices(append(e8m0.ScaleModes(), e8m0.LibraryScaleModes()...), func(m e8m0.ScaleMode) Choice { return Choice{m.Name, m.Summary, m.Source} })
}

func q8_1Choices() []Choice {
	return choices(ggml.Q8_1Profiles(), func(p ggml.Q8_1Profile) Choice { return Choice{p.Name, p.Summary, p.Source} })
}

func layoutChoices() []Choice {
	return choices(awq.Layouts(), func(l awq.Layout) Choice { return Choice{l.Name, l.Summary, l.Source} })
}

func quantizerChoices() []Choice {
	return choices(awq.Quantizers(), func(q awq.Quantizer) Choice { return Choice{q.Name, q.Summary, q.Source} })
}

func kernelChoices() []Choice {
	return choices(awq.Kernels(), func(k awq.Kernel) Choice { return Choice{k.Name, k.Summary, k.Source} })
}

func recipeChoices() []Choice {
	return choices(nvfp4.Recipes(), func(r nvfp4.Recipe) Choice { return Choice{r.Name, r.Summary, r.Source} })
}

// dequantRecipeChoices are the recipes whose library dequantizes.
func dequantRecipeChoices() []Choice {
	var rs []nvfp4.Recipe
	for _, r := range nvfp4.Recipes() {
		if r.Dequantizes() {
			rs = append(rs, r)
		}
	}
	return choices(rs, func(r nvfp4.Recipe) Choice { return Choice{r.Name, r.Summary, r.Source} })
}

func tieChoices() []Choice {
	return choices(sparse24.TieRules(), func(r sparse24.TieRule) Choice { return Choice{r.Name, r.Summary, r.Source} })
}

func scheduleChoices() []Choice {
	return choices(gemv.Names(), func(n string) Choice { return Choice{Name: n, Summary: gemv.Summary(n)} })
}
