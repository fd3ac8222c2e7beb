package mx

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// The device harness (conformance/harness/mx-family) runs torchao's
// to_mx and microxcaling's _quantize_mx on these inputs; the comparator
// below says which rule of this package reproduces each output file, and
// records_test.go holds the named profiles to the committed records.

// harnessInputs are the cases: adversarial bands at the layout shapes,
// random magnitudes, the edge blocks (as [16, 32]: torchao's to_mx takes
// no dim1 cast of them, microxcaling zero-pads the 16-row blocks), and
// element ties at scale 2^0 (tiesMatrix; added after the first device
// run, whose inputs had no tie, so its records cannot tell round "even"
// from "nearest").
func harnessInputs() map[string][2]int {
	return map[string][2]int{"bands_160x288": {160, 288}, "bands_224x160": {224, 160}, "random_64x256": {64, 256}, "edges_16x32": {16, 32},
		"ties_64x64": {64, 64}}
}

func harnessInput(name string, rows, cols int) []float32 {
	switch {
	case strings.HasPrefix(name, "bands"):
		return AdversarialBands(rows, cols, Dim0, 11)
	case strings.HasPrefix(name, "random"):
		return randomMatrix(rows, cols, 12)
	case strings.HasPrefix(name, "ties"):
		return tiesMatrix(rows, cols, 13)
	}
	return edgeMatrix()
}

// tiesMatrix holds, in row r, blocks for element type tieElements[r%5]:
// each block has the element's largest value (so every scale rule but
// twice-OCP gives the scale 2^0 and the elements are the inputs), the
// float32 just below half the smallest subnormal step (0.5 - 2^-25
// steps: microxcaling's float32 |t|+0.5 rounds it up), and the midpoints
// of consecutive element values, signs random: ties to even and ties away
// differ on every one of them.
func tiesMatrix(rows, cols int, seed uint64) []float32 {
	x := make([]float32, rows*cols)
	s := seed
	next := func() uint64 { s = splitmix(s); return s }
	for r := 0; r < rows; r++ {
		e := tieElements[r%len(tieElements)]
		vals := elementValues(e)
		for b := 0; b < cols/BlockSize; b++ {
			blk := x[r*cols+b*BlockSize : r*cols+(b+1)*BlockSize]
			for i := range blk {
				k := int(next() % uint64(len(vals)-1))
				blk[i] = (vals[k] + vals[k+1]) / 2 // exact: the values have few bits
			}
			blk[next()%BlockSize] = e.Max
			j := int(next() % BlockSize)
			for blk[j] == e.Max {
				j = (j + 1) % BlockSize
			}
			blk[j] = float32(0.5-0x1p-25) * (vals[1] - vals[0])
			for i := range blk {
				if next()&1 == 1 {
					blk[i] = -blk[i]
				}
			}
		}
	}
	return x
}

var tieElements = []Element{E4M3, E5M2, E2M3, E3M2, INT8}

// elementValues are e's non-negative finite values, ascending.
func elementValues(e Element) []float32 {
	var v []float32
	for c := 0; c < 1<<e.Bits; c++ {
		d := e.Decode(uint8(c))
		if d >= 0 && d <= e.Max && !math.Signbit(float64(d)) {
			v = append(v, d)
		}
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v
}

func writeST(path string, ts map[string][]float32, shapes map[string][2]int) error {
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	var body []byte
	for _, n := range names {
		off := len(body)
		for _, v := range ts[n] {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
		}
		header[n] = map[string]any{"dtype": "F32", "shape": []int{shapes[n][0], shapes[n][1]}, "data_offsets": []int{off, len(body)}}
	}
	h, _ := json.Marshal(header)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return os.WriteFile(path, append(append(out, h...), body...), 0o644)
}

type stTensor struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Off   [2]int `json:"data_offsets"`
	data  []byte
}

func readST(path string) (map[string]stTensor, error) {
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) < 8 {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	n := binary.LittleEndian.Uint64(raw)
	var h map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &h); err != nil {
		return nil, err
	}
	out := map[string]stTensor{}
	for k, v := range h {
		if k == "__metadata__" {
			continue
		}
		var t stTensor
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, err
		}
		t.data = raw[8+n+uint64(t.Off[0]) : 8+n+uint64(t.Off[1])]
		out[k] = t
	}
	return out, nil
}

// TestWriteHarnessInputs writes inputs.safetensors into $BITEXACT_MX_WRITE.
func TestWriteHarnessInputs(t *testing.T) {
	dir := os.Getenv("BITEXACT_MX_WRITE")
	if dir == "" {
		t.Skip("set BITEXACT_MX_WRITE to a folder")
	}
	ts, shapes := map[string][]float32{}, map[string][2]int{}
	for name, sh := range harnessInputs() {
		ts[name], shapes[name] = harnessInput(name, sh[0], sh[1]), sh
	}
	if err := writeST(filepath.Join(dir, "inputs.safetensors"), ts, shapes); err != nil {
		t.Fatal(err)
	}
}

var harnessElements = map[string]Element{"e4m3": E4M3, "e5m2": E5M2, "e2m3": E2M3, "e3m2": E3M2,
	"fp8_e4m3": E4M3, "fp8_e5m2": E5M2, "fp6_e2m3": E2M3, "fp6_e3m2": E3M2, "int8": INT8}

// TestHarnessRecords reports, per file of the unpacked device outputs in
// $BITEXACT_MX_RECORDS, which rule of this package reproduces every tensor
// it holds, bit for bit: torchao's codes and scales under each scale mode
// (the OCP four, the library and wild modes) and element profile, and
// under each TorchAO profile;
// microxcaling's values under Microxcaling (NaN positions exact, their
// bits reported, as the device chooses them). A tensor the library did not
// write (an error or a call it refuses, named in the .json beside the
// file) is listed, not compared.
func TestHarnessRecords(t *testing.T) {
	dir := os.Getenv("BITEXACT_MX_RECORDS")
	if dir == "" {
		t.Skip("set BITEXACT_MX_RECORDS to the unpacked mx-out folder")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if len(files) == 0 {
		t.Fatalf("no outputs in %s", dir)
	}
	modes := append(append(e8m0.ScaleModes(), e8m0.LibraryScaleModes()...), e8m0.WildScaleModes()...)
	for _, f := range files {
		base := filepath.Base(f)
		parts := strings.Split(strings.TrimSuffix(base, ".safetensors"), ".")
		if len(parts) != 4 {
			continue
		}
		impl, el := parts[0], harnessElements[parts[1]]
		got, err := readST(f)
		if err != nil || len(got) == 0 {
			meta, _ := os.ReadFile(f + ".json")
			t.Logf("%s: no outputs (%v) %s", base, err, meta)
			continue
		}
		var match []string
		if impl == "microxcaling" {
			for _, m := range []Microxcaling{{}, {Nearest: true}} {
				if nans, ok := microxcalingMatches(got, el, m); ok {
					match = append(match, fmt.Sprintf("%s (NaN bits %v)", map[bool]string{false: MicroxcalingEven, true: MicroxcalingNearest}[m.Nearest], nans))
				}
			}
		} else {
			for _, p := range TorchAOProfiles() {
				if torchaoProfileMatches(got, el, p) {
					match = append(match, p.Name())
				}
			}
			for _, m := range modes {
				for _, p := range el.Profiles {
					if torchaoMatches(got, el, p, m) {
						match = append(match, m.Name+"/"+p)
					}
				}
			}
		}
		t.Logf("%s: %d tensors, reproduced by %v", base, len(got), match)
	}
}

// harnessCase splits a tensor name "<case>.dim<d>.<what>".
func harnessCase(name string) (c string, d Dim, what string, ok bool) {
	parts := strings.Split(name, ".")
	if len(parts) != 3 || (parts[1] != "dim0" && parts[1] != "dim1") {
		return "", 0, "", false
	}
	if _, known := harnessInputs()[parts[0]]; !known {
		return "", 0, "", false
	}
	if parts[1] == "dim1" {
		d = Dim1
	}
	return parts[0], d, parts[2], true
}

func torchaoMatches(got map[string]stTensor, el Element, prof string, m e8m0.ScaleMode) bool {
	for name, c := range got {
		cs, d, what, ok := harnessCase(name)
		if !ok || what != "codes" {
			continue
		}
		sh := harnessInputs()[cs]
		q, err := Quantize(harnessInput(cs, sh[0], sh[1]), sh[0], sh[1], d, Options{Element: el, Profile: prof, Mode: m})
		if err != nil {
			return false
		}
		s := got[strings.TrimSuffix(name, "codes")+"scales"]
		if string(c.data) != string(q.Codes) || string(s.data) != string(q.Scales) {
			return false
		}
	}
	return true
}

// microxcalingMatches reports whether m reproduces every value tensor
// bit for bit but for the bits of its NaNs (the same positions), which it
// returns.
func microxcalingMatches(got map[string]stTensor, el Element, m Microxcaling) (map[string]string, bool) {
	nans := map[string]string{}
	for name, g := range got {
		cs, d, what, ok := harnessCase(name)
		if !ok || what != "y" {
			continue
		}
		sh := harnessInputs()[cs]
		y, err := m.QDQ(harnessInput(cs, sh[0], sh[1]), sh[0], sh[1], d, el, 0x7fc00000)
		if err != nil || len(g.data) != 4*len(y) {
			return nil, false
		}
		for i, v := range y {
			w := binary.LittleEndian.Uint32(g.data[4*i:])
			switch {
			case w&0x7fffffff > 0x7f800000 && v != v:
				nans[name] = fmt.Sprintf("0x%08x", w)
			case w != math.Float32bits(v):
				return nil, false
			}
		}
	}
	return nans, true
}

func torchaoProfileMatches(got map[string]stTensor, el Element, p TorchAO) bool {
	for name, c := range got {
		cs, d, what, ok := harnessCase(name)
		if !ok || what != "codes" {
			continue
		}
		sh := harnessInputs()[cs]
		q, err := p.Quantize(harnessInput(cs, sh[0], sh[1]), sh[0], sh[1], d, el)
		if err != nil {
			return false
		}
		s := got[strings.TrimSuffix(name, "codes")+"scales"]
		if string(c.data) != string(q.Codes) || string(s.data) != string(q.Scales) {
			return false
		}
	}
	return true
}
