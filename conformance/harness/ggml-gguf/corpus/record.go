package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/refimpl/gguf"
)

// Record is what one build of ggml's C did on the corpus.
type Record struct {
	// Implementation is "ggml-org/ggml@<commit>".
	Implementation string `json:"implementation"`
	// Build is the compiler, its flags and the arch (and the emulator).
	Build string `json:"build"`
	// Command reruns it.
	Command string `json:"command"`
	// Profile names the refimpl/gguf profile the record is held to.
	Profile string `json:"profile"`
	// Corpus is CorpusDigest of the inputs the build ran on.
	Corpus string `json:"corpus"`
	// Ops are the outputs, one per op and type.
	Ops []Op `json:"ops"`
}

// Op is one function's output on its corpus: the SHA-256 of all of it and
// a short digest per unit (quantize: the blocks of one 256-value group;
// dequantize: one block; vecdot: one row, its float32 bits written out).
type Op struct {
	Op   string `json:"op"`   // quantize, dequantize, vecdot
	Name string `json:"name"` // the type or dot product
	// SHA256 is the hash of the whole output.
	SHA256 string `json:"sha256"`
	// Units holds 8 hex digits per unit: the first 4 bytes of the unit's
	// SHA-256, or for vecdot the row's float32 bits.
	Units string `json:"units"`
}

// Output is the raw output of one op with its unit size in bytes.
type Output struct {
	Op, Name string
	Data     []byte
	Unit     int
}

// Digest makes the record entry of an output.
func (o Output) Digest() (Op, error) {
	if o.Unit <= 0 || len(o.Data)%o.Unit != 0 {
		return Op{}, fmt.Errorf("corpus: %s %s: %d bytes are not whole %d-byte units", o.Op, o.Name, len(o.Data), o.Unit)
	}
	sum := sha256.Sum256(o.Data)
	var u strings.Builder
	for i := 0; i < len(o.Data); i += o.Unit {
		unit := o.Data[i : i+o.Unit]
		if o.Op == "vecdot" {
			fmt.Fprintf(&u, "%08x", binary.LittleEndian.Uint32(unit))
			continue
		}
		h := sha256.Sum256(unit)
		u.WriteString(hex.EncodeToString(h[:4]))
	}
	return Op{Op: o.Op, Name: o.Name, SHA256: hex.EncodeToString(sum[:]), Units: u.String()}, nil
}

func f32bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// Inputs are the corpus files gguf.c reads, by file name: floats.f32 (the
// quantize corpus), blocks.<type> (the dequantize corpus), weights.<dot>
// and acts.f32 (the dot products).
func Inputs() map[string][]byte {
	in := map[string][]byte{"floats.f32": f32bytes(Floats()), "acts.f32": f32bytes(DotActs())}
	for _, t := range gguf.Types() {
		in["blocks."+t.String()] = Blocks(t)
	}
	for _, d := range gguf.Dots() {
		in["weights."+d.String()] = DotWeights(d)
	}
	return in
}

// CorpusDigest is the SHA-256 of every input file, name and contents,
// in name order.
func CorpusDigest() string {
	in := Inputs()
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(in[n]))
		h.Write(in[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// OutputFile is the file gguf.c writes for an op: q.<type>, dq.<type>,
// dot.<dot>.
func OutputFile(op, name string) string {
	return map[string]string{"quantize": "q.", "dequantize": "dq.", "vecdot": "dot."}[op] + name
}

// Reference computes every op with refimpl/gguf under profile p, in
// record order: quantize of each type that has a quantizer, dequantize of
// each type, then the dot products.
func Reference(p gguf.Profile) ([]Output, error) {
	var outs []Output
	x := Floats()
	for _, t := range gguf.Types() {
		if !t.CanQuantize() {
			continue
		}
		q, err := gguf.Quantize(t, x, p)
		if err != nil {
			return nil, err
		}
		outs = append(outs, Output{"quantize", t.String(), q, 256 / t.BlockElems() * t.BlockBytes()})
	}
	for _, t := range gguf.Types() {
		y, err := gguf.Dequantize(t, Blocks(t), p)
		if err != nil {
			return nil, err
		}
		outs = append(outs, Output{"dequantize", t.String(), f32bytes(y), 4 * t.BlockElems()})
	}
	acts := DotActs()
	for _, d := range gguf.Dots() {
		w := DotWeights(d)
		wrow := DotK / d.W.BlockElems() * d.W.BlockBytes()
		res := make([]float32, DotRows)
		for r := range res {
			a, err := d.QuantizeAct(acts[r*DotK:(r+1)*DotK], p)
			if err != nil {
				return nil, err
			}
			if res[r], err = d.VecDot(w[r*wrow:(r+1)*wrow], a, p); err != nil {
				return nil, err
			}
		}
		outs = append(outs, Output{"vecdot", d.String(), f32bytes(res), 4})
	}
	return outs, nil
}

// ReadOutputs reads what gguf.c (or another implementation's harness)
// wrote into dir, in Reference's order and units. With partial, an op
// whose file is missing is left out (an implementation that lacks it);
// otherwise it is an error.
func ReadOutputs(dir string, partial bool) ([]Output, error) {
	ref, err := Reference(gguf.NoFMA) // for the order and unit sizes only
	if err != nil {
		return nil, err
	}
	var outs []Output
	for _, o := range ref {
		b, err := os.ReadFile(filepath.Join(dir, OutputFile(o.Op, o.Name)))
		if partial && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		o.Data = b
		outs = append(outs, o)
	}
	return outs, nil
}

// ReadRecord reads a record file.
func ReadRecord(path string) (Record, error) {
	var r Record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %v", path, err)
	}
	return r, nil
}

// Compare lists where the outputs differ from the record: one line per op
// of the record that differs, naming the first differing units (with the
// quantize corpus group's kind). Every op of the record must be among
// outs; ops of outs the record lacks are not compared.
func Compare(rec Record, outs []Output) ([]string, error) {
	var diffs []string
	byKey := map[string]Output{}
	for _, o := range outs {
		byKey[o.Op+" "+o.Name] = o
	}
	kinds := Kinds()
	for _, want := range rec.Ops {
		o, ok := byKey[want.Op+" "+want.Name]
		if !ok {
			return nil, fmt.Errorf("corpus: the record has %s %s, the reference has not", want.Op, want.Name)
		}
		got, err := o.Digest()
		if err != nil {
			return nil, err
		}
		if want.SHA256 == got.SHA256 {
			continue
		}
		if len(want.Units) != len(got.Units) {
			diffs = append(diffs, fmt.Sprintf("%s %s: %d units recorded, %d computed", o.Op, o.Name, len(want.Units)/8, len(got.Units)/8))
			continue
		}
		var bad []string
		n := 0
		for u := 0; u+8 <= len(want.Units); u += 8 {
			if want.Units[u:u+8] == got.Units[u:u+8] {
				continue
			}
			n++
			if len(bad) < 6 {
				s := fmt.Sprintf("unit %d", u/8)
				if o.Op == "quantize" {
					s += " (" + kinds[u/8] + ")"
				}
				if o.Op == "vecdot" {
					s += fmt.Sprintf(" (record %s, reference %s)", want.Units[u:u+8], got.Units[u:u+8])
				}
				bad = append(bad, s)
			}
		}
		diffs = append(diffs, fmt.Sprintf("%s %s: %d units differ: %s", o.Op, o.Name, n, strings.Join(bad, ", ")))
	}
	return diffs, nil
}
