// Package record holds what a real implementation did when it was run: the
// measurements that ground every profile naming an implementation.
//
// A unary record is the exhaustive Merkle tree (see
// github.com/bitexact/bitexact/golden/exhaustive) of one implementation's
// codes for all 2^32 float32 inputs, so its leaves compare directly with
// a profile's committed digest, plus the comparison with the nearest
// profile (differing chunks and inputs, the first differing inputs) and
// the provenance of the run. A table record holds the outputs of a
// function of a small domain (a decode of the 256 E8M0 codes). Records
// live as testdata under conformance/harness/<harness>/records/ and are
// written by `bitexact record`; block ops are recorded there as results
// folders with a certificate (docs/vendor.md).
package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/internal/golden/strictjson"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Provenance says what was run, where and how.
type Provenance struct {
	// Harness is the folder under conformance/harness that holds the
	// harness and this record ("ggml", "torch", "ptx", ...).
	Harness string `json:"harness"`
	// Implementation names the implementation and its version or commit.
	Implementation string `json:"implementation"`
	// Function is the exact function, instruction or expression run.
	Function string `json:"function"`
	// Build is the compiler and flags, or the device and driver.
	Build string `json:"build"`
	// Date is when it was run (UTC, RFC 3339 or a date).
	Date string `json:"date"`
	// Command reproduces the record from a checkout of this repository
	// (and of the implementation, where the harness builds one).
	Command string `json:"command"`
}

// Diff is one input on which an implementation and a profile disagree.
type Diff struct {
	Input   string `json:"input"`   // float32 bits, 0x%08x
	Profile string `json:"profile"` // the profile's code
	Got     string `json:"got"`     // the implementation's code
}

// Comparison is an implementation's outputs against one profile's.
type Comparison struct {
	Profile string `json:"profile"` // "format/profile"
	// Chunks is the number of 2^24-input chunks whose leaves differ.
	Chunks int `json:"differing_chunks"`
	// Inputs is the number of differing inputs, or -1 when not every
	// differing chunk's outputs were kept by the run (only Chunks is
	// then exact).
	Inputs int64 `json:"differing_inputs"`
	// First are the first differing inputs in input order (at most
	// maxFirst), from the chunks whose outputs were kept.
	First []Diff `json:"first_differences,omitempty"`
}

// maxFirst bounds Comparison.First.
const maxFirst = 8

// Unary is the record of one float32 -> code conversion.
type Unary struct {
	Kind string `json:"kind"` // "unary"
	Provenance
	// Format is the code format ("fp16", "e2m1", ...).
	Format string `json:"format"`
	exhaustive.Digest
	// Nearest is the comparison with the profile of Format that differs
	// on the fewest inputs (then chunks); Inputs == 0 means the
	// implementation conforms to it over all 2^32 inputs.
	Nearest Comparison `json:"nearest"`
	// Canonical is the comparison with the format's canonical profile
	// (its first), when that is not Nearest.
	Canonical *Comparison `json:"canonical,omitempty"`
}

// Conforms reports whether the record equals its nearest profile on every
// input.
func (r *Unary) Conforms() bool { return r.Nearest.Chunks == 0 && r.Nearest.Inputs == 0 }

// Table is the record of a function over a small code domain, such as a
// decode of the 256 E8M0 codes to float32.
type Table struct {
	Kind string `json:"kind"` // "table"
	Provenance
	// Op names the function's reference ("e8m0.decode").
	Op string `json:"op"`
	// Outputs[i] is the output for code i, as hex bits (0x%08x).
	Outputs []string `json:"outputs"`
}

// File is one record file read from a tree.
type File struct {
	Path  string
	Unary *Unary
	Table *Table
}

// ReadAll reads every *.json record under */records/ of fsys (the
// conformance/harness folder), in path order. Files inside a folder
// holding a results.json (block-op results, see ReadBlocks) are skipped.
func ReadAll(fsys fs.FS) ([]File, error) {
	var files []File
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".json" || !inRecords(p) {
			return nil
		}
		if path.Dir(path.Dir(p)) != "." && path.Base(path.Dir(path.Dir(p))) == "records" {
			return nil // a block-op results folder
		}
		if strings.Count(p, "/") != 2 {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f, err := Parse(b)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		f.Path = p
		files = append(files, f)
		return nil
	})
	return files, err
}

func inRecords(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) >= 3 && parts[1] == "records"
}

// Parse decodes one record file and checks that it is well formed: a
// known kind, provenance filled in, and for a unary record a Merkle root
// that matches its leaves.
func Parse(b []byte) (File, error) {
	if err := strictjson.CheckText(b); err != nil {
		return File{}, fmt.Errorf("malformed record: %w", err)
	}
	var head struct{ Kind string }
	if err := json.Unmarshal(b, &head); err != nil {
		return File{}, fmt.Errorf("malformed record: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	switch head.Kind {
	case "unary":
		var u Unary
		if err := dec.Decode(&u); err != nil {
			return File{}, fmt.Errorf("malformed unary record: %w", err)
		}
		if err := u.check(); err != nil {
			return File{}, err
		}
		return File{Unary: &u}, nil
	case "table":
		var t Table
		if err := dec.Decode(&t); err != nil {
			return File{}, fmt.Errorf("malformed table record: %w", err)
		}
		if err := t.Provenance.check(); err != nil {
			return File{}, err
		}
		if len(t.Outputs) == 0 || t.Op == "" {
			return File{}, errors.New("table record without op or outputs")
		}
		return File{Table: &t}, nil
	}
	return File{}, fmt.Errorf("unknown record kind %q (want unary or table)", head.Kind)
}

func (p *Provenance) check() error {
	for _, f := range []struct{ name, v string }{
		{"harness", p.Harness}, {"implementation", p.Implementation}, {"function", p.Function},
		{"build", p.Build}, {"date", p.Date}, {"command", p.Command},
	} {
		if f.v == "" {
			return fmt.Errorf("record without %s", f.name)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("record %s %q is not valid UTF-8", f.name, f.v)
		}
	}
	return nil
}

func (r *Unary) check() error {
	if err := r.Provenance.check(); err != nil {
		return err
	}
	if r.Nearest.Profile == "" {
		return errors.New("unary record without a nearest profile")
	}
	if f, _, _ := strings.Cut(r.Conversion, "/"); f != r.Format {
		return fmt.Errorf("unary record of format %s names conversion %s", r.Format, r.Conversion)
	}
	return r.Digest.CheckRoot()
}

// Marshal encodes a record as committed: indented JSON, final newline.
func Marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// Analyzer builds a unary record's digest and comparisons chunk by chunk,
// so that a harness can stream all 2^32 outputs through it.
type Analyzer struct {
	format string
	convs  []unary.Conversion
	digs   []*exhaustive.Digest
	cmps   []Comparison
	leaves []string
	ref    []byte
}

// NewAnalyzer compares outputs of a conversion to format with every
// profile of that format.
func NewAnalyzer(format string) (*Analyzer, error) {
	a := &Analyzer{format: format, leaves: make([]string, exhaustive.Leaves)}
	for _, c := range unary.All() {
		if c.Format != format {
			continue
		}
		d, err := exhaustive.Committed(c.Name)
		if err != nil {
			return nil, err
		}
		a.convs = append(a.convs, c)
		a.digs = append(a.digs, d)
		a.cmps = append(a.cmps, Comparison{Profile: c.Name})
	}
	if len(a.convs) == 0 {
		return nil, fmt.Errorf("unknown format %q", format)
	}
	a.ref = make([]byte, exhaustive.Chunk*a.Width())
	return a, nil
}

// Width is the bytes per code of the format.
func (a *Analyzer) Width() int { return a.convs[0].Width() }

// Add takes chunk i's leaf (hex) and, when kept, its outputs (nil
// otherwise); outputs are hashed and must give the leaf.
func (a *Analyzer) Add(i int, leaf string, out []byte) error {
	if i < 0 || i >= exhaustive.Leaves {
		return fmt.Errorf("chunk %d out of range", i)
	}
	if out != nil {
		if len(out) != len(a.ref) {
			return fmt.Errorf("chunk %d: %d bytes, want %d", i, len(out), len(a.ref))
		}
		h := sha256.New()
		h.Write([]byte{0})
		h.Write(out)
		got := hex.EncodeToString(h.Sum(nil))
		if leaf == "" {
			leaf = got
		} else if got != leaf {
			return fmt.Errorf("chunk %d: outputs hash to %s, the leaf given is %s", i, got, leaf)
		}
	}
	if len(leaf) != 2*sha256.Size {
		return fmt.Errorf("chunk %d: leaf %q is not a SHA-256 hex digest", i, leaf)
	}
	a.leaves[i] = leaf
	start := uint32(i) << exhaustive.ChunkLog2
	for k, c := range a.convs {
		if a.digs[k].Leaves[i] == leaf {
			continue
		}
		cmp := &a.cmps[k]
		cmp.Chunks++
		if out == nil {
			cmp.Inputs = -1
			continue
		}
		c.EncodeRange(start, a.ref)
		n, first := diff(start, a.Width(), a.ref, out, maxFirst-len(cmp.First))
		if cmp.Inputs >= 0 {
			cmp.Inputs += n
		}
		cmp.First = append(cmp.First, first...)
	}
	return nil
}

// Record returns the record of all chunks added (every chunk must have
// been): its digest, named after the nearest profile, the comparison
// with that profile and, when it is not the format's canonical one, with
// the canonical profile too.
func (a *Analyzer) Record(p Provenance) (*Unary, error) {
	for i, l := range a.leaves {
		if l == "" {
			return nil, fmt.Errorf("chunk %d was never added", i)
		}
	}
	best := 0
	for k := range a.cmps {
		if better(a.cmps[k], a.cmps[best]) {
			best = k
		}
	}
	r := &Unary{Kind: "unary", Provenance: p, Format: a.format, Nearest: a.cmps[best]}
	r.Digest = exhaustive.Digest{Conversion: a.convs[best].Name, Width: a.Width(), ChunkLog2: exhaustive.ChunkLog2,
		Leaves: append([]string(nil), a.leaves...)}
	if err := setRoot(&r.Digest); err != nil {
		return nil, err
	}
	if best != 0 {
		c := a.cmps[0]
		r.Canonical = &c
	}
	return r, r.check()
}

// better orders comparisons by differing inputs (unknown counts last),
// then chunks.
func better(a, b Comparison) bool {
	ka, kb := a.Inputs, b.Inputs
	if ka < 0 {
		ka = math.MaxInt64
	}
	if kb < 0 {
		kb = math.MaxInt64
	}
	if ka != kb {
		return ka < kb
	}
	return a.Chunks < b.Chunks
}

func diff(start uint32, width int, want, got []byte, max int) (int64, []Diff) {
	var n int64
	var first []Diff
	code := func(b []byte, i int) uint32 {
		if width == 1 {
			return uint32(b[i])
		}
		return uint32(b[2*i]) | uint32(b[2*i+1])<<8
	}
	digits := 2 * width
	for i := 0; i < len(want)/width; i++ {
		w, g := code(want, i), code(got, i)
		if w == g {
			continue
		}
		n++
		if len(first) < max {
			first = append(first, Diff{
				Input:   fmt.Sprintf("0x%08x", start+uint32(i)),
				Profile: fmt.Sprintf("0x%0*x", digits, w),
				Got:     fmt.Sprintf("0x%0*x", digits, g),
			})
		}
	}
	return n, first
}

// setRoot fills d.Root with the Merkle root of its leaves, built as
// golden/exhaustive builds it (inner node SHA-256(0x01 || left || right));
// CheckRoot then confirms the two constructions agree.
func setRoot(d *exhaustive.Digest) error {
	level := make([][]byte, len(d.Leaves))
	for i, s := range d.Leaves {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) != sha256.Size {
			return fmt.Errorf("leaf %d is not a SHA-256 hex digest", i)
		}
		level[i] = b
	}
	for len(level) > 1 {
		next := make([][]byte, len(level)/2)
		for i := range next {
			h := sha256.New()
			h.Write([]byte{1})
			h.Write(level[2*i])
			h.Write(level[2*i+1])
			next[i] = h.Sum(nil)
		}
		level = next
	}
	d.Root = hex.EncodeToString(level[0])
	return d.CheckRoot()
}

// Check holds a unary record to the committed profile digests: the
// comparison it states with its nearest profile (and the canonical one)
// must still be what the leaves say, and no profile may now equal the
// record on every chunk unless it is the one the record names.
func (r *Unary) Check() error {
	for _, c := range append([]*Comparison{&r.Nearest}, r.Canonical) {
		if c == nil {
			continue
		}
		d, err := exhaustive.Committed(c.Profile)
		if err != nil {
			return err
		}
		n := 0
		for i := range d.Leaves {
			if d.Leaves[i] != r.Leaves[i] {
				n++
			}
		}
		if n != c.Chunks {
			return fmt.Errorf("record says %d chunks differ from %s; the committed digest gives %d", c.Chunks, c.Profile, n)
		}
		if n == 0 && c.Inputs != 0 {
			return fmt.Errorf("record says %d inputs differ from %s, yet every leaf is equal", c.Inputs, c.Profile)
		}
	}
	var equal []string
	for _, c := range unary.All() {
		if c.Format != r.Format {
			continue
		}
		d, err := exhaustive.Committed(c.Name)
		if err != nil {
			return err
		}
		if d.Root == r.Root {
			equal = append(equal, c.Name)
		}
	}
	sort.Strings(equal)
	if len(equal) > 0 && (r.Nearest.Chunks != 0 || !contains(equal, r.Nearest.Profile)) {
		return fmt.Errorf("profiles %s equal this record on all 2^32 inputs, but it names %s as nearest with %d differing chunks",
			strings.Join(equal, ", "), r.Nearest.Profile, r.Nearest.Chunks)
	}
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
