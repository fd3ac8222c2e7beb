// Package suite groups the golden cases into vendor suites: what a kernel
// author runs once per input set and then holds against every profile of
// the format.
//
// A suite is one reference op (e2m1.encode, fp8.encode, nvfp4.quantize,
// ...) and the parameter keys that name a profile (profile, rounding,
// recipe, mode, layout, schedule, ...). The golden cases of that op are
// grouped into tasks by input set and the remaining parameters: a task is
// one run of the vendor's kernel, and each case of the task is the
// expected output under one profile. Certifying a task's outputs against
// every case of the task gives the per-profile verdicts ("conforms to
// satfinite; differs from nosat on 22 elements").
package suite

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/gemv"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// parseSchedule accepts a GEMV schedule spec string (every key of
// gemv.Schedule.String, well formed).
func parseSchedule(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("%q is neither a named schedule of the suite nor a spec string (chunk=..,lanes=..,group=..,fma=0|1,acc=..,partial=..,reduce=..,out=..)", v)
	}
	_, err := gemv.Parse(v)
	return err
}

// Spec declares a suite: the op and the parameters that select a profile.
type Spec struct {
	Name string
	// Op is the refimpl/ops operation the suite certifies.
	Op string
	// Filter, when set, keeps only cases whose params hold these values
	// (the e4m3 suite is fp8.encode with format=e4m3).
	Filter map[string]string
	// Exclude drops cases whose params hold any of these values (the
	// compressed-tensors layout of awq.pack reads another input set).
	Exclude map[string]string
	// ProfileKeys are the parameters whose values name a profile, in the
	// order they appear in a profile's name.
	ProfileKeys []string
	// Defaults fill profile keys that a case leaves out (the op's own
	// defaults), so that every profile has a full name.
	Defaults map[string]string
	// SpecKey, when set, is a profile key whose value may be any spec
	// string the reference accepts (a GEMV schedule
	// "chunk=..,lanes=..,...,out=.."), not only the values the golden
	// cases name: a profile spelled with such a value is a valid claim,
	// and certify computes its expected outputs through the reference.
	SpecKey string
	// ParseSpec checks a SpecKey value that no golden case names; nil
	// accepts none.
	ParseSpec func(string) error
	// Bound, when set, makes the suite a bound-mode suite: for kernels
	// whose summation order is not fixed (split-K with atomics), each
	// output is held to the rigorous error bound of the exact product
	// (BoundOp), not compared bit for bit. Op's golden cases supply the
	// tasks (one per input set, whatever their schedule); the profile is
	// the bound model the results declare (ParseBound), one of
	// BoundModels or any other well-formed one, and is required.
	Bound bool
	// BoundModels are a bound-mode suite's named models (its Profiles):
	// the ones the family's reference schedules are proved to meet.
	BoundModels []string
	// BoundKeys are the family's keys of a bound model besides mul32,
	// round16 and out.
	BoundKeys []BoundChoice
	// InputDTypes, when set, keeps only cases whose input tensors have
	// these dtypes (the e2m1-from-fp16 suite reads an F16 x, the e2m1
	// suite an F32 one).
	InputDTypes map[string]string
	Doc         string
}

// Specs lists the vendor suites: those of every code format, derived
// from its description (formatSpecs), then those of the other ops, then
// those of every block format of refimpl/block (blockSpecs).
func Specs() []Spec {
	return append(append(formatSpecs(), []Spec{
		{Name: "e2m1-pack", Op: "e2m1.pack",
			Doc: "E2M1 codes -> two codes per byte, element 2i in the low nibble"},
		{Name: "e2m1-unpack", Op: "e2m1.unpack",
			Doc: "two E2M1 codes per byte -> one code per byte, element 2i from the low nibble"},
		{Name: "fp8", Op: "fp8.encode", InputDTypes: map[string]string{"x": "F32"}, ProfileKeys: []string{"profile"},
			Doc: "float32 -> FP8 E4M3 and E5M2 codes (one per byte)"},
		{Name: "e8m0-scale", Op: "e8m0.shared_scale", ProfileKeys: []string{"mode"},
			Doc: "MX shared scale (E8M0) from a block amax, E2M1 elements"},
		{Name: "nvfp4", Op: "nvfp4.quantize", InputDTypes: map[string]string{"x": "F32"}, ProfileKeys: []string{"recipe", "swizzle"}, Defaults: map[string]string{"recipe": "canonical", "swizzle": "0"},
			Doc: "NVFP4 quantize: packed E2M1 pairs, E4M3 block scales per 16, float32 per-tensor scale"},
		{Name: "mxfp4", Op: "mxfp4.quantize", InputDTypes: map[string]string{"x": "F32"}, ProfileKeys: []string{"mode", "profile"}, Defaults: map[string]string{"mode": "floor", "profile": "nvidia"},
			Doc: "MXFP4 quantize: packed E2M1 pairs, E8M0 scale per 32"},
		{Name: "ggml-mxfp4", Op: "ggml.mxfp4.quantize", ProfileKeys: []string{"log2", "cast"},
			Doc: "llama.cpp block_mxfp4 quantize_row_mxfp4_ref"},
		{Name: "q8_1", Op: "ggml.q8_1.quantize", ProfileKeys: []string{"s"},
			Doc: "llama.cpp block_q8_1 quantize"},
		{Name: "awq-pack", Op: "awq.pack", ProfileKeys: []string{"layout"}, Exclude: map[string]string{"layout": "compressed-tensors"},
			Doc: "int4 weights and zero points -> int32 words"},
		{Name: "awq-pack-ct", Op: "awq.pack", ProfileKeys: []string{"layout"}, Filter: map[string]string{"layout": "compressed-tensors"},
			Doc: "int4 weights with the implicit zero point 8 -> compressed-tensors int32 words"},
		{Name: "awq-unpack", Op: "awq.unpack",
			Doc: "AWQ int32 words and zero points (vLLM GEMM layout, nibble order 0,2,4,6,1,3,5,7) -> int4 weights and zero points, one per byte"},
		{Name: "awq-quantize", Op: "awq.quantize", ProfileKeys: []string{"quantizer"},
			Doc: "fp16 weights -> AWQ int4 (vLLM GEMM layout) with fp16 scales"},
		{Name: "awq-dequantize", Op: "awq.dequantize", ProfileKeys: []string{"kernel"}, Defaults: map[string]string{"kernel": "cuda"},
			Doc: "AWQ int32 words, zero points and fp16 scales (vLLM GEMM layout) -> fp16 weights; the profile is the kernel's zero sign"},
		{Name: "sparse24", Op: "sparse24.compress", ProfileKeys: []string{"tie", "layout"},
			Doc: "2:4 compression of E2M1 codes: kept pairs and 2-bit index metadata"},
		{Name: "sparse24-select", Op: "sparse24.select", ProfileKeys: []string{"tie"}, Defaults: map[string]string{"tie": "lower-index"},
			Doc: "2:4 selection of E2M1 codes: kept codes (dropped -> 0) and one i0|i1<<2 index nibble per group of 4; the profile is the tie rule"},
		{Name: "sparse24-decompress", Op: "sparse24.decompress",
			Doc: "2:4 kept pairs and index metadata (row-major) -> dense E2M1 codes, 0 where dropped"},
		{Name: "sparse24-reorder", Op: "sparse24.reorder_meta", Filter: map[string]string{"dtype": "int16"},
			Doc: "row-major 2:4 metadata -> the CUTLASS reordered int16 layout (torch to_sparse_semi_structured for a 16-bit dense operand)"},
		{Name: "sparse24-reorder-i32", Op: "sparse24.reorder_meta", Filter: map[string]string{"dtype": "int32"},
			Doc: "row-major 2:4 metadata -> the CUTLASS reordered int32 layout (int8 dense operand)"},
		{Name: "sparse24-unreorder", Op: "sparse24.unreorder_meta",
			Doc: "CUTLASS reordered int16 2:4 metadata -> row-major metadata"},
		{Name: "nvfp4-swizzle", Op: "nvfp4.swizzle",
			Doc: "NVFP4 block scales [M,K/16] -> the 128x4 tensor-core layout, zero padded, flattened"},
		{Name: "nvfp4-unswizzle", Op: "nvfp4.unswizzle",
			Doc: "the 128x4 swizzled scale layout -> block scales [M,K/16], padding dropped"},
		{Name: "gemv-mxfp4", Op: "gemv.mxfp4_q8_1", SpecKey: "schedule", ParseSpec: parseSchedule, ProfileKeys: []string{"schedule"},
			Doc: "llama.cpp MXFP4 x Q8_1 GEMV; the schedule is the declared float summation order"},
		{Name: "gemv-awq", Op: "gemv.awq", SpecKey: "schedule", ParseSpec: parseSchedule, ProfileKeys: []string{"schedule"},
			Doc: "AWQ W4A16 GEMV; the schedule is the declared float summation order"},
		{Name: "gemv-sparse-fp4", Op: "gemv.sparse_fp4", SpecKey: "schedule", ParseSpec: parseSchedule, ProfileKeys: []string{"schedule", "scale_decode"}, Defaults: map[string]string{"scale_decode": "e4m3fn"},
			Doc: "2:4-sparse NVFP4 MoE GEMV; the schedule is the declared float summation order"},
		{Name: "gemv-bound", Op: "gemv.exact", Bound: true, InputDTypes: map[string]string{"w": "F32"}, ProfileKeys: []string{"mul32", "round16", "out"},
			BoundModels: []string{"mul32=1,round16=0,out=fp32", "mul32=1,round16=0,out=fp16"},
			Doc:         "dense float32 GEMV y = W x in bound mode, for a kernel of any float32 summation order (split-K with atomics): each output within the rigorous bound of the exact product under the declared model, not bit-exact; mul32=1: a float32 product rounds, fused or not (an FMA into a zero accumulator rounds it)"},
		{Name: "gemv-f16-bound", Op: "gemv.exact", Bound: true, InputDTypes: map[string]string{"w": "F16"}, ProfileKeys: []string{"mul32", "round16", "out"},
			BoundModels: []string{"mul32=0,round16=0,out=fp32", "mul32=0,round16=0,out=fp16"},
			Doc:         "dense fp16 GEMV y = W x (fp16 w and x, float32 accumulation) in bound mode, for a kernel of any float32 summation order (split-K with atomics): each output within the rigorous bound of the exact product, not bit-exact; fp16 products are exact in float32 (mul32=0)"},
		{Name: "gemv-mxfp4-bound", Op: "gemv.mxfp4_q8_1", Bound: true, ProfileKeys: []string{"schedule"},
			BoundModels: []string{"mul32=2,round16=0,out=fp32"},
			Doc:         "llama.cpp MXFP4 x Q8_1 GEMV in bound mode (any float32 summation order): each output within the rigorous bound of the exact product, not bit-exact; mul32=2 for d = 2^(e-128) * d8 and d * sumi"},
		{Name: "gemv-awq-bound", Op: "gemv.awq", Bound: true, ProfileKeys: []string{"schedule"},
			BoundModels: []string{"mul32=0,round16=0,out=fp32", "mul32=0,round16=0,out=fp16"},
			Doc:         "AWQ W4A16 GEMV in bound mode (any float32 summation order): each output within the rigorous bound of the exact product of awq.dequantize's fp16 weights and x, not bit-exact; fp16 products are exact in float32 (mul32=0)"},
		{Name: "gemv-sparse-fp4-bound", Op: "gemv.sparse_fp4", Bound: true, ProfileKeys: []string{"schedule", "scale_decode"},
			BoundKeys:   []BoundChoice{{Key: "scale_decode", Values: []string{"e4m3fn", "dgx_lut"}}},
			BoundModels: []string{"mul32=2,round16=1,out=fp16,scale_decode=e4m3fn", "mul32=2,round16=1,out=fp16,scale_decode=dgx_lut"},
			Doc:         "2:4-sparse NVFP4 MoE GEMV in bound mode (any float32 summation order): each output within the rigorous bound of the exact product, not bit-exact; mul32=2 for scale * global and group sum * scale, round16=1 for fp16 split-K partials"},
		{Name: "fp8-decode", Op: "fp8.decode",
			Doc: "FP8 E4M3 and E5M2 codes -> float32 (a task per format)"},
		{Name: "nvfp4-dequantize", Op: "nvfp4.dequantize", ProfileKeys: []string{"recipe"}, Defaults: map[string]string{"recipe": "canonical"},
			Doc: "NVFP4 packed E2M1 pairs, E4M3 block scales per 16 (row-major) and float32 per-tensor scale -> float32; the profile is the recipe that produced the tensor"},
		{Name: "mxfp4-dequantize", Op: "mxfp4.dequantize", ProfileKeys: []string{"profile"}, Defaults: map[string]string{"profile": "default"},
			Doc: "MXFP4 packed E2M1 pairs and E8M0 scales per 32 -> float32; the profile is the reference (default) or a library's recorded dequantizer"},
		{Name: "ggml-mxfp4-dequantize", Op: "ggml.mxfp4.dequantize",
			Doc: "llama.cpp block_mxfp4 -> float32 (dequantize_row_mxfp4)"},
		{Name: "q8_1-dequantize", Op: "ggml.q8_1.dequantize",
			Doc: "llama.cpp block_q8_1 -> float32"},
	}...), append(halfInputSpecs(), blockSpecs()...)...)
}

// halfInputSpecs are the conversion and quantizer suites of fp16 and
// bf16 inputs (those of every code format but the input's own type): the
// expected code of a 16-bit input is the float32 conversion's code of its
// exactly widened value (a bfloat16 shifted left 16; an fp16's value,
// a NaN keeping its sign and payload, made quiet). Each reads every code of
// its input type (golden all.fp16, all.bf16), so a claim is checked on all
// of them. They are suites of their own, not tasks of the float32 suites:
// a vendor certifies the kernel it ships, and a float32 kernel's results
// need not hold 16-bit tasks.
func halfInputSpecs() []Spec {
	var v []Spec
	for _, src := range []struct{ name, dtype string }{{"fp16", "F16"}, {"bf16", "BF16"}} {
		in := map[string]string{"x": src.dtype}
		from := " (" + src.name + " input widened exactly to float32, then converted)"
		for _, f := range unary.Formats() {
			if f.Name != src.name {
				v = append(v, encodeSpec(f, src.name, src.dtype))
			}
		}
		v = append(v,
			Spec{Name: "nvfp4-from-" + src.name, Op: "nvfp4.quantize", InputDTypes: in, ProfileKeys: []string{"recipe", "swizzle"}, Defaults: map[string]string{"recipe": "canonical", "swizzle": "0"},
				Doc: "NVFP4 quantize of " + src.name + " activations: packed E2M1 pairs, E4M3 block scales per 16, float32 per-tensor scale" + from},
			Spec{Name: "mxfp4-from-" + src.name, Op: "mxfp4.quantize", InputDTypes: in, ProfileKeys: []string{"mode", "profile"}, Defaults: map[string]string{"mode": "floor", "profile": "nvidia"},
				Doc: "MXFP4 quantize of " + src.name + " activations: packed E2M1 pairs, E8M0 scale per 32" + from})
	}
	return v
}

// Names lists the suite names.
func Names() []string {
	var n []string
	for _, s := range Specs() {
		n = append(n, s.Name)
	}
	return n
}

// Suite is a Spec resolved against a golden set.
type Suite struct {
	Spec
	// Version is the golden suite version (golden.SuiteVersion of the set).
	Version string
	// Profiles are every profile name the suite's cases use, in first
	// appearance order after sorting by case name (canonical profiles of
	// the refimpl come first where their case names sort first).
	Profiles []string
	Tasks    []Task
	// MaxK is the longest reduction (the elements one output sums) of
	// the tasks, for a GEMV suite; 0 for the others. Claims are bounded
	// by it: no schedule count or bound-model rounding count beyond what
	// these shapes can use is accepted.
	MaxK int
}

// Task is one run of the kernel: an input set and fixed parameters, with
// one golden case per profile.
type Task struct {
	// Name is the input set name, with ".key-value" for fixed parameters
	// that differ between tasks of the same input set.
	Name   string
	Inputs string
	// Params are the fixed (non-profile) parameters of every case.
	Params map[string]string
	// Cases maps a profile name to its golden case.
	Cases map[string]golden.CaseFile
	// Profiles lists the task's profiles in suite order.
	Profiles []string
}

// ProfileName spells the profile of params: the value alone for one
// profile key, "k=v,k=v" for several, "default" for none.
func (s Spec) ProfileName(params map[string]string) string {
	if len(s.ProfileKeys) == 0 {
		return "default"
	}
	vals := make([]string, len(s.ProfileKeys))
	for i, k := range s.ProfileKeys {
		v, ok := params[k]
		if !ok {
			v = s.Defaults[k]
		}
		vals[i] = v
	}
	if len(vals) == 1 {
		return vals[0]
	}
	for i, k := range s.ProfileKeys {
		vals[i] = k + "=" + vals[i]
	}
	return strings.Join(vals, ",")
}

func (s Spec) isProfileKey(k string) bool {
	for _, p := range s.ProfileKeys {
		if p == k {
			return true
		}
	}
	return false
}

// Lookup finds a spec by name.
func Lookup(name string) (Spec, error) {
	for _, s := range Specs() {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("unknown suite %q (suites: %s)", name, strings.Join(Names(), ", "))
}

// Resolve builds the named suite from the cases of set.
func Resolve(set *golden.Set, name string) (*Suite, error) {
	spec, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return spec.Resolve(set)
}

// Resolve builds the suite from the cases of set.
func (s Spec) Resolve(set *golden.Set) (*Suite, error) {
	if s.Bound {
		return s.resolveBound(set)
	}
	inputDTypes := inputDTypesOf(set)
	var cases []golden.CaseFile
	for _, c := range set.Manifest.Cases {
		if c.Op != s.Op {
			continue
		}
		keep := s.inputsMatch(inputDTypes[c.Inputs])
		for k, v := range s.Filter {
			if c.Params[k] != v {
				keep = false
			}
		}
		for k, v := range s.Exclude {
			if c.Params[k] == v {
				keep = false
			}
		}
		if keep {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("suite %s: the golden set %s has no case of op %s", s.Name, set.Manifest.Suite, s.Op)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	// Fixed parameters that take several values within one input set must
	// appear in the task name.
	fixedVals := map[string]map[string]map[string]bool{} // inputs -> key -> values
	for _, c := range cases {
		m := fixedVals[c.Inputs]
		if m == nil {
			m = map[string]map[string]bool{}
			fixedVals[c.Inputs] = m
		}
		for k, v := range c.Params {
			if s.isProfileKey(k) {
				continue
			}
			if m[k] == nil {
				m[k] = map[string]bool{}
			}
			m[k][v] = true
		}
	}
	su := &Suite{Spec: s, Version: set.Manifest.Suite}
	byName := map[string]*Task{}
	var order []string
	seenProfile := map[string]bool{}
	for _, c := range cases {
		fixed := map[string]string{}
		var keys []string
		for k, v := range c.Params {
			if !s.isProfileKey(k) {
				fixed[k] = v
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		name := c.Inputs
		for _, k := range keys {
			if len(fixedVals[c.Inputs][k]) > 1 {
				name += "." + k + "-" + fixed[k]
			}
		}
		t := byName[name]
		if t == nil {
			t = &Task{Name: name, Inputs: c.Inputs, Params: fixed, Cases: map[string]golden.CaseFile{}}
			byName[name] = t
			order = append(order, name)
		}
		p := s.ProfileName(c.Params)
		if prev, dup := t.Cases[p]; dup {
			return nil, fmt.Errorf("suite %s: cases %s and %s are the same profile %s of task %s", s.Name, prev.Name, c.Name, p, name)
		}
		t.Cases[p] = c
		if !seenProfile[p] {
			seenProfile[p] = true
			su.Profiles = append(su.Profiles, p)
		}
	}
	rank := map[string]int{}
	for i, p := range su.Profiles {
		rank[p] = i
	}
	sort.Strings(order)
	for _, n := range order {
		t := byName[n]
		for p := range t.Cases {
			t.Profiles = append(t.Profiles, p)
		}
		sort.Slice(t.Profiles, func(i, j int) bool { return rank[t.Profiles[i]] < rank[t.Profiles[j]] })
		su.Tasks = append(su.Tasks, *t)
	}
	su.MaxK = maxReduction(set, s.Op, su.Tasks)
	return su, nil
}

// inputDTypesOf maps each input set of set to its tensors' dtypes.
func inputDTypesOf(set *golden.Set) map[string]map[string]string {
	m := map[string]map[string]string{}
	for _, in := range set.Manifest.Inputs {
		d := map[string]string{}
		for _, t := range in.Tensors {
			d[t.Name] = t.DType
		}
		m[in.Name] = d
	}
	return m
}

// inputsMatch reports whether an input set's dtypes hold s.InputDTypes.
func (s Spec) inputsMatch(dtypes map[string]string) bool {
	for k, v := range s.InputDTypes {
		if dtypes[k] != v {
			return false
		}
	}
	return true
}

// resolveBound builds a bound-mode suite: one task per input set of Op's
// cases, holding every case of the set under its case name (for the
// inputs and the output shape only); the task's parameters are those all
// its cases share. The profiles are the named bound models.
func (s Spec) resolveBound(set *golden.Set) (*Suite, error) {
	su := &Suite{Spec: s, Version: set.Manifest.Suite, Profiles: append([]string{}, s.BoundModels...)}
	inputDTypes := inputDTypesOf(set)
	byName := map[string]*Task{}
	var order []string
	for _, c := range set.Manifest.Cases {
		if c.Op != s.Op || !s.inputsMatch(inputDTypes[c.Inputs]) {
			continue
		}
		t := byName[c.Inputs]
		if t == nil {
			t = &Task{Name: c.Inputs, Inputs: c.Inputs, Params: map[string]string{}, Cases: map[string]golden.CaseFile{}}
			for k, v := range c.Params {
				t.Params[k] = v
			}
			byName[c.Inputs] = t
			order = append(order, c.Inputs)
		}
		for k, v := range t.Params {
			if c.Params[k] != v {
				delete(t.Params, k)
			}
		}
		t.Cases[c.Name] = c
		t.Profiles = append(t.Profiles, c.Name)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("suite %s: the golden set %s has no case of op %s", s.Name, set.Manifest.Suite, s.Op)
	}
	sort.Strings(order)
	for _, n := range order {
		t := byName[n]
		sort.Strings(t.Profiles)
		// A task's parameters are the family's fixed ones (the AWQ
		// group), never a schedule: the bound holds for every order.
		for _, k := range s.ProfileKeys {
			delete(t.Params, k)
		}
		su.Tasks = append(su.Tasks, *t)
	}
	su.MaxK = maxReduction(set, s.Op, su.Tasks)
	for _, m := range s.BoundModels {
		if _, err := su.ParseBound(m); err != nil {
			return nil, fmt.Errorf("suite %s: named model: %v", s.Name, err)
		}
	}
	return su, nil
}

// Task finds a task by name.
func (s *Suite) Task(name string) (Task, bool) {
	for _, t := range s.Tasks {
		if t.Name == name {
			return t, true
		}
	}
	return Task{}, false
}

// HasProfile reports whether p is one of the suite's profiles.
func (s *Suite) HasProfile(p string) bool {
	for _, q := range s.Profiles {
		if q == p {
			return true
		}
	}
	return false
}

// ResultFile is the name of a task's results file inside a results
// directory.
func ResultFile(task string) string { return task + ".safetensors" }

// InputFile is the name of a task's input file inside an export
// directory.
func InputFile(task string) string { return "inputs/" + task + ".safetensors" }

// formatSpecs are the suites of every code format of refimpl/unary, from
// its description: its float32 conversion, the conversions from its peer
// formats' codes and, where the golden set has decode cases, its decoder.
func formatSpecs() []Spec {
	var enc, dec []Spec
	for _, f := range unary.Formats() {
		enc = append(enc, encodeSpec(f, "", "F32"))
		for _, pp := range unary.PeerPairs() {
			if pp.To.Name == f.Name {
				s := encodeSpec(f, pp.From.Name, "U8")
				s.Filter = copyParams(f.Encode.Params)
				s.Filter["input"] = pp.From.Name
				s.Doc = pp.From.Code + " -> " + f.Code + " (the code's exact value converted)"
				enc = append(enc, s)
			}
		}
		if d := f.DecodeOp; d.NoGolden == "" {
			s := Spec{Name: f.Name + "-decode", Op: d.Op, Filter: f.DecodeParams(),
				Doc: f.Code + " -> float32" + d.SuiteNote}
			if len(s.Filter) == 0 {
				s.Filter = nil
			}
			if d.ProfileParam != "" {
				s.ProfileKeys = []string{d.ProfileParam}
				s.Defaults = map[string]string{d.ProfileParam: d.Profiles[0].Name}
			}
			dec = append(dec, s)
		}
	}
	return append(enc, dec...)
}

// encodeSpec is the suite of format f's conversion of float32 x (from
// "") or of fp16 or bf16 x (from "fp16", "bf16", the input's dtype).
func encodeSpec(f unary.Format, from, dtype string) Spec {
	e := f.Encode
	s := Spec{Name: f.Name, Op: e.Op, InputDTypes: map[string]string{"x": dtype}, Filter: copyParams(e.Params),
		ProfileKeys: []string{e.ProfileParam}, Doc: "float32 -> " + f.Code + e.SuiteNote}
	if len(s.Filter) == 0 {
		s.Filter = nil
	}
	if op, err := ops.Lookup(e.Op); err == nil {
		if v, ok := op.Default(e.ProfileParam); ok {
			s.Defaults = map[string]string{e.ProfileParam: v}
		}
	}
	if from != "" {
		s.Name += "-from-" + from
		s.Doc = from + " -> " + f.Code + " (" + from + " input widened exactly to float32, then converted)"
	}
	return s
}

func copyParams(p map[string]string) map[string]string {
	q := make(map[string]string, len(p))
	for k, v := range p {
		q[k] = v
	}
	return q
}
