package record

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/refimpl/unary"
)

// Matrix is the ecosystem matrix as data: the same rows as
// docs/ecosystem.md (Ecosystem), in the same order, for the browser
// demo's Ecosystem view. Every field comes from a record, a certificate or
// the reference's committed digests.
type Matrix struct {
	// Source says what generated the document.
	Source string        `json:"source"`
	Unary  []MatrixUnary `json:"unary"`
	Tables []MatrixTable `json:"tables"`
	Blocks []MatrixBlock `json:"blocks"`
}

// MatrixUnary is one unary record.
type MatrixUnary struct {
	Record string `json:"record"` // path under conformance/harness
	Provenance
	Format    string      `json:"format"`
	Conforms  bool        `json:"conforms"`
	Nearest   Comparison  `json:"nearest"`
	Canonical *Comparison `json:"canonical,omitempty"`
	// Link is an input on which the implementation and the format's
	// canonical profile disagree; nil when they agree everywhere.
	Link *link `json:"link,omitempty"`
}

// link is an input where a recorded implementation and the canonical
// profile of its format disagree, to be shown in the value view.
type link struct {
	Input string `json:"input"` // float32 bits, 0x%08x
	// Got is the implementation's code; Profile names the profile that
	// gives Got on Input (the nearest, when the record conforms to it).
	Got     string `json:"got"`
	Profile string `json:"profile"`
	// Canonical is the canonical profile and Want its code.
	Canonical string `json:"canonical"`
	Want      string `json:"want"`
	// From is "record" when the input is the record's first difference
	// from the canonical profile, or "reference" when the record kept no
	// differing inputs (only chunk digests) and the input is the first
	// on which its nearest profile, which it equals on all 2^32 inputs,
	// and the canonical profile disagree.
	From string `json:"from"`
}

// MatrixTable is one table record, compared with its model and the
// reference.
type MatrixTable struct {
	Record string `json:"record"`
	Provenance
	Op string `json:"op"`
	// Model and Reference name the reference functions compared; empty
	// when no model is known.
	Model     string `json:"model,omitempty"`
	Reference string `json:"reference,omitempty"`
	// ModelDiffs and RefDiffs list the codes where the record differs
	// from each ("code: record (reference)").
	ModelDiffs []string `json:"modelDiffs"`
	RefDiffs   []string `json:"referenceDiffs"`
	Codes      int      `json:"codes"`
}

// MatrixBlock is one block-op record and its certificate's verdicts.
type MatrixBlock struct {
	Record         string          `json:"record"`
	Suite          string          `json:"suite"`
	Implementation string          `json:"implementation"`
	Library        string          `json:"library,omitempty"`
	Commit         string          `json:"commit,omitempty"`
	Platform       string          `json:"platform"`
	Conforms       []string        `json:"conforms"`
	Others         []BlockMismatch `json:"others"`
	// Tool is the bitexact build that certified the results.
	Tool string `json:"tool"`
}

// BlockMismatch is a profile a block record does not conform to.
type BlockMismatch struct {
	Profile    string `json:"profile"`
	Mismatches int    `json:"mismatches"`
}

// buildMatrix reads the records under root (the conformance/harness
// folder) into a Matrix, rows in the order of Ecosystem.
func buildMatrix(root string) (*Matrix, error) {
	files, err := ReadAll(os.DirFS(root))
	if err != nil {
		return nil, err
	}
	blocks, err := ReadBlocks(root)
	if err != nil {
		return nil, err
	}
	m := &Matrix{Source: "go run ./cmd/bitexact ecosystem (from conformance/harness/*/records)",
		Unary: []MatrixUnary{}, Tables: []MatrixTable{}, Blocks: []MatrixBlock{}}
	var unaries []File
	for _, f := range files {
		if f.Unary != nil {
			unaries = append(unaries, f)
		}
		if t := f.Table; t != nil {
			mt := MatrixTable{Record: f.Path, Provenance: t.Provenance, Op: t.Op, Codes: len(t.Outputs),
				ModelDiffs: []string{}, RefDiffs: []string{}}
			if model, canonical, names := TableModel(t); model != nil {
				mt.Model, mt.Reference = names[0], names[1]
				if mt.ModelDiffs, err = TableDiffs(t, model); err != nil {
					return nil, fmt.Errorf("%s: %w", f.Path, err)
				}
				if mt.RefDiffs, err = TableDiffs(t, canonical); err != nil {
					return nil, fmt.Errorf("%s: %w", f.Path, err)
				}
				if mt.ModelDiffs == nil {
					mt.ModelDiffs = []string{}
				}
				if mt.RefDiffs == nil {
					mt.RefDiffs = []string{}
				}
			}
			m.Tables = append(m.Tables, mt)
		}
	}
	sort.SliceStable(unaries, func(i, j int) bool { return unaryLess(unaries[i].Unary, unaries[j].Unary) })
	firsts := map[[2]string]*Diff{}
	for _, f := range unaries {
		u := f.Unary
		mu := MatrixUnary{Record: f.Path, Provenance: u.Provenance, Format: u.Format, Conforms: u.Conforms(),
			Nearest: u.Nearest, Canonical: u.Canonical}
		switch {
		case u.Canonical != nil && len(u.Canonical.First) > 0:
			d := u.Canonical.First[0]
			mu.Link = &link{Input: d.Input, Got: d.Got, Profile: u.Nearest.Profile, Canonical: u.Canonical.Profile, Want: d.Profile, From: "record"}
			if !u.Conforms() {
				mu.Link.Profile = ""
			}
		case u.Canonical != nil && u.Conforms():
			key := [2]string{u.Nearest.Profile, u.Canonical.Profile}
			d, ok := firsts[key]
			if !ok {
				if d, err = firstDifference(key[0], key[1]); err != nil {
					return nil, fmt.Errorf("%s: %w", f.Path, err)
				}
				firsts[key] = d
			}
			if d != nil {
				mu.Link = &link{Input: d.Input, Got: d.Got, Profile: key[0], Canonical: key[1], Want: d.Profile, From: "reference"}
			}
		case u.Canonical == nil && !u.Conforms() && len(u.Nearest.First) > 0:
			// The nearest profile is the canonical one, and the
			// implementation differs from it.
			d := u.Nearest.First[0]
			mu.Link = &link{Input: d.Input, Got: d.Got, Canonical: u.Nearest.Profile, Want: d.Profile, From: "record"}
		}
		m.Unary = append(m.Unary, mu)
	}
	for _, bl := range blocks {
		c := bl.Cert
		mb := MatrixBlock{Record: bl.Dir, Suite: c.Suite, Implementation: c.Implementation, Library: bl.Library, Commit: bl.Commit, Platform: c.Platform,
			Conforms: bl.Conforming(), Others: []BlockMismatch{}, Tool: c.Tool}
		if mb.Conforms == nil {
			mb.Conforms = []string{}
		}
		for _, p := range c.Profiles {
			if !p.Conforms {
				mb.Others = append(mb.Others, BlockMismatch{p.Profile, p.Mismatches})
			}
		}
		m.Blocks = append(m.Blocks, mb)
	}
	return m, nil
}

// EcosystemJSON renders buildMatrix as indented JSON, the demo's
// ecosystem.json.
func EcosystemJSON(root string) ([]byte, error) {
	m, err := buildMatrix(root)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func unaryLess(a, c *Unary) bool {
	if a.Format != c.Format {
		return formatOrder(a.Format) < formatOrder(c.Format)
	}
	if a.Harness != c.Harness {
		return a.Harness < c.Harness
	}
	return a.Implementation+a.Function < c.Implementation+c.Function
}

// firstDifference finds the first input (in bit-pattern order) on which
// the conversions got and want disagree: the committed digests name the
// first differing chunk, which is then walked. It returns nil when the
// digests agree everywhere.
func firstDifference(got, want string) (*Diff, error) {
	dg, err := exhaustive.Committed(got)
	if err != nil {
		return nil, err
	}
	dw, err := exhaustive.Committed(want)
	if err != nil {
		return nil, err
	}
	cg, ok1 := conversion(got)
	cv, ok2 := conversion(want)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("no conversion %q or %q", got, want)
	}
	for i := range dg.Leaves {
		if dg.Leaves[i] == dw.Leaves[i] {
			continue
		}
		const step = 1 << 16
		w := cg.Width()
		a, b := make([]byte, step*w), make([]byte, step*w)
		for off := uint32(0); off < exhaustive.Chunk; off += step {
			start := uint32(i)<<exhaustive.ChunkLog2 + off
			cg.EncodeRange(start, a)
			cv.EncodeRange(start, b)
			for k := 0; k < step; k++ {
				ca, cb := code(a, k, w), code(b, k, w)
				if ca == cb {
					continue
				}
				digits := max(2, (cg.Bits+3)/4) // records write 4-bit codes as 0x%02x
				return &Diff{Input: fmt.Sprintf("0x%08x", start+uint32(k)), Got: fmt.Sprintf("0x%0*x", digits, ca), Profile: fmt.Sprintf("0x%0*x", digits, cb)}, nil
			}
		}
		return nil, fmt.Errorf("%s and %s: chunk %d digests differ but every code agrees", got, want, i)
	}
	return nil, nil
}

// code reads the k-th code of a stream of width-byte codes (little-endian).
func code(b []byte, k, w int) uint32 {
	if w == 2 {
		return uint32(b[2*k]) | uint32(b[2*k+1])<<8
	}
	return uint32(b[k])
}

func conversion(name string) (unary.Conversion, bool) {
	for _, c := range unary.All() {
		if c.Name == name {
			return c, true
		}
	}
	return unary.Conversion{}, false
}
