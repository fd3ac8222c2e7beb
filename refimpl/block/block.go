// Package block is the one description of each block format of the
// reference: its element and scale formats, block size and byte layout,
// the ops that quantize and dequantize it with their parameters, its
// profiles with Summary and Source, the input classes that matter at its
// edges, the fault models a diagnosis tries, and the dot products that
// read it. The golden catalogue's block families, the vendor suites, the
// generic diagnosis alternatives, the demo's block metadata, the
// semantics doc, the ecosystem order and the CLI's block listing are
// derived from Formats and Dots, so a new block format is one
// declaration here and needs no per-format switch anywhere else
// (cmd/bitexact's TestBlockFacets names a facet a declaration misses).
//
// A description holds the functions that compute (Quantize, Dequantize,
// Dot.Run); refimpl/ops registers one op per distinct op name over them,
// so the op table and the description cannot disagree.
package block

import (
	"fmt"
	"sort"
	"strings"
)

// Format is one block format.
type Format struct {
	// Name is the format's name in op parameters and golden case names
	// ("q4_K", ggml's type name).
	Name string
	// Suite is the stem of its suite names ("gguf-q4_k": the quantize
	// suite; "gguf-q4_k-dequantize").
	Suite string
	// Title is its name in headings ("GGUF Q4_K").
	Title string
	// Family groups its golden cases in reports ("gguf").
	Family string
	// Elements and Scale say, in one line each, the element encoding and
	// the scale format and rule.
	Elements, Scale string
	// BlockElems values are stored in BlockBytes bytes.
	BlockElems, BlockBytes int
	// Layout is the block's bytes, field by field, in order; the fields
	// cover the block exactly (Validate).
	Layout []Field
	// Quantize is nil for a dequantize-only format.
	Quantize   *QuantizeOp
	Dequantize DequantizeOp
	// ProfileParam is the op parameter that names a profile; Profiles
	// are its values, the canonical (the op's default) first.
	ProfileParam string
	Profiles     []Profile
	// Faults are the reported ways implementations of this format break,
	// as computations the diagnosis runs beside the profiles.
	Faults []Fault
	// Rationale is the repository path of the document that gives the
	// sources of the format and its profiles.
	Rationale string
}

// Field is one field of a block's bytes.
type Field struct {
	Name string
	// Offset and Bytes place it in the block.
	Offset, Bytes int
	// Kind is how its bytes read: "fp16", "f32", "u8", "i8", "nibbles"
	// (two 4-bit values a byte, low first), "bits" (packed high or sign
	// bits), "k4-scales" (8 6-bit scales and 8 6-bit mins in 12 bytes,
	// get_scale_min_k4), "k3-scales" (16 6-bit scales in 12 bytes),
	// "ue4m3" (one UE4M3 scale a byte), "trits" (base-3 digits), "i16".
	Kind string
	Doc  string
}

// Profile is one named rule of a block format's ops.
type Profile struct {
	Name, Summary, Source string
}

// QuantizeOp is the op that quantizes float32 to the format's blocks.
type QuantizeOp struct {
	// Op is the refimpl/ops name, Params the fixed parameters that select
	// this format ("type": "q4_K").
	Op     string
	Params map[string]string
	// Run quantizes x (a whole number of blocks) under profile.
	Run func(x []float32, profile string) ([]byte, error)
	// Inputs are the golden input sets of float32 values (a whole number
	// of 256-value groups, so that every block size divides them); a set
	// shared by several formats is one input set of the golden set.
	Inputs []FloatSet
	// Widens: the op also takes fp16 and bf16 x, widened exactly, and the
	// format has -from-fp16 and -from-bf16 suites.
	Widens bool
	Doc    string
}

// DequantizeOp is the op that dequantizes the format's blocks.
type DequantizeOp struct {
	Op     string
	Params map[string]string
	Run    func(b []byte, profile string) ([]float32, error)
	// Inputs are the golden input sets of blocks.
	Inputs []BlockSet
	Doc    string
}

// FloatSet is a golden input set of float32 values.
type FloatSet struct {
	Name, Doc string
	Make      func() []float32
	// Classes name the input classes in order, each Count values.
	Classes []Class
}

// BlockSet is a golden input set of one format's blocks.
type BlockSet struct {
	Name, Doc string
	Make      func() []byte
	Classes   []Class
}

// Class is a run of Count values (or blocks) of one input class.
type Class struct {
	Name  string
	Count int
}

// Fault is a reported implementation bug as a computation: Quantize or
// Dequantize (whichever the fault is in) under the same profile, with
// the bug.
type Fault struct {
	Class, Doc string
	// Quantize is the faulty quantizer, nil for a dequantizer fault.
	Quantize   func(x []float32, profile string) ([]byte, error)
	Dequantize func(b []byte, profile string) ([]float32, error)
}

// Dot is a dot product over block formats: a GEMV of weight rows in W's
// blocks times activations already quantized to Act's blocks.
type Dot struct {
	Name  string // "q4_K_q8_K"
	Suite string // "gguf-vecdot-q4_k-q8_k"
	Title string
	// W and Act name block formats of Formats.
	W, Act string
	// Op and Params: the refimpl/ops op and its fixed parameters.
	Op     string
	Params map[string]string
	// Schedule is the declared float32 summation order, in words.
	Schedule     string
	ProfileParam string
	Profiles     []Profile
	// Run computes y[r] for each of the rows of w.
	Run func(w, act []byte, rows int, profile string) ([]float32, error)
	// Inputs make a golden input set: rows weight rows and their
	// quantized activations.
	Inputs DotSet
}

// DotSet is a dot product's golden input set.
type DotSet struct {
	Name, Doc string
	Make      func() (w []byte, rows int, act []byte)
}

var (
	formats []Format
	dots    []Dot
)

// declare adds formats and dots; it panics on an invalid declaration, a
// programming error every test of the package reports.
func declare(fs []Format, ds []Dot) bool {
	for _, f := range fs {
		if err := f.validate(); err != nil {
			panic("block: " + err.Error())
		}
		if _, err := Lookup(f.Name); err == nil {
			panic("block: format " + f.Name + " declared twice")
		}
		formats = append(formats, f)
	}
	for _, d := range ds {
		if _, err := Lookup(d.W); err != nil {
			panic("block: dot " + d.Name + ": " + err.Error())
		}
		if _, err := Lookup(d.Act); err != nil {
			panic("block: dot " + d.Name + ": " + err.Error())
		}
		dots = append(dots, d)
	}
	return true
}

// Validate checks that a description is complete: names, a dequantizer,
// profiles, and a layout that covers the block's bytes exactly.
func (f Format) Validate() error { return f.validate() }

func (f Format) validate() error {
	switch {
	case f.Name == "" || f.Suite == "" || f.Title == "" || f.Family == "" || f.Rationale == "":
		return fmt.Errorf("format %q is declared without a name, suite, title, family or rationale", f.Name)
	case f.BlockElems <= 0 || f.BlockBytes <= 0 || 256%f.BlockElems != 0:
		return fmt.Errorf("format %s: block of %d values in %d bytes (the values must divide 256)", f.Name, f.BlockElems, f.BlockBytes)
	case f.Dequantize.Op == "" || f.Dequantize.Run == nil:
		return fmt.Errorf("format %s has no dequantizer", f.Name)
	case f.ProfileParam == "" || len(f.Profiles) == 0:
		return fmt.Errorf("format %s has no profiles", f.Name)
	case f.Quantize != nil && (f.Quantize.Op == "" || f.Quantize.Run == nil):
		return fmt.Errorf("format %s: quantizer without an op or a function", f.Name)
	}
	off := 0
	for _, fl := range f.Layout {
		if fl.Offset != off || fl.Bytes <= 0 {
			return fmt.Errorf("format %s: field %s at byte %d (%d bytes), want byte %d", f.Name, fl.Name, fl.Offset, fl.Bytes, off)
		}
		off += fl.Bytes
	}
	if off != f.BlockBytes {
		return fmt.Errorf("format %s: the layout covers %d bytes of a %d-byte block", f.Name, off, f.BlockBytes)
	}
	return nil
}

// Formats lists the block formats in declaration order.
func Formats() []Format { return append([]Format(nil), formats...) }

// Dots lists the dot products in declaration order.
func Dots() []Dot { return append([]Dot(nil), dots...) }

// Lookup finds a block format by name.
func Lookup(name string) (Format, error) {
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return Format{}, fmt.Errorf("unknown block format %q (known: %s)", name, strings.Join(names, ", "))
}

// LookupDot finds a dot product by name.
func LookupDot(name string) (Dot, error) {
	for _, d := range dots {
		if d.Name == name {
			return d, nil
		}
	}
	return Dot{}, fmt.Errorf("unknown block dot product %q", name)
}

// ProfileNames lists the names of profiles, in order.
func ProfileNames(ps []Profile) []string {
	n := make([]string, len(ps))
	for i, p := range ps {
		n[i] = p.Name
	}
	return n
}

// Params returns a copy of fixed parameters with the profile parameter
// set to profile ("" leaves it out).
func Params(fixed map[string]string, key, profile string) map[string]string {
	p := make(map[string]string, len(fixed)+1)
	for k, v := range fixed {
		p[k] = v
	}
	if profile != "" {
		p[key] = profile
	}
	return p
}

// Match reports whether params hold every fixed parameter.
func Match(params, fixed map[string]string) bool {
	for k, v := range fixed {
		if params[k] != v {
			return false
		}
	}
	return true
}

// FixedKeys lists the fixed parameter keys of the formats or dots whose
// op is op, sorted (for the op's parameter table).
func FixedKeys(op string) []string {
	seen := map[string]bool{}
	add := func(p map[string]string) {
		for k := range p {
			seen[k] = true
		}
	}
	for _, f := range formats {
		if f.Quantize != nil && f.Quantize.Op == op {
			add(f.Quantize.Params)
		}
		if f.Dequantize.Op == op {
			add(f.Dequantize.Params)
		}
	}
	for _, d := range dots {
		if d.Op == op {
			add(d.Params)
		}
	}
	var k []string
	for key := range seen {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}
