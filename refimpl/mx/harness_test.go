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

// The device harness (conformance/harness/torchao-mx8) runs torchao's
// to_mx and microxcaling's _quantize_mx on these inputs; the comparator
// below says which rule of this package reproduces each output file.

// harnessInputs are the cases: adversarial bands at the layout shapes,
// random magnitudes, and the edge blocks (as [16, 32]).
func harnessInputs() map[string][2]int {
	return map[string][2]int{"bands_160x288": {160, 288}, "bands_224x160": {224, 160}, "random_64x256": {64, 256}, "edges_16x32": {16, 32}}
}

func harnessInput(name string, rows, cols int) []float32 {
	switch {
	case strings.HasPrefix(name, "bands"):
		return AdversarialBands(rows, cols, Dim0, 11)
	case strings.HasPrefix(name, "random"):
		return randomMatrix(rows, cols, 12)
	}
	return edgeMatrix()
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
// $BITEXACT_MX_RECORDS, which scale mode and element profile reproduce
// it on every case and both dims (torchao: codes and scales; microxcaling:
// the dequantized values).
func TestHarnessRecords(t *testing.T) {
	dir := os.Getenv("BITEXACT_MX_RECORDS")
	if dir == "" {
		t.Skip("set BITEXACT_MX_RECORDS to the unpacked mx-out folder")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if len(files) == 0 {
		t.Fatalf("no outputs in %s", dir)
	}
	modes := append(e8m0.ScaleModes(), e8m0.WildScaleModes()...)
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
		for _, m := range modes {
			for _, p := range el.Profiles {
				if harnessMatches(t, impl, got, el, p, m) {
					match = append(match, m.Name+"/"+p)
				}
			}
		}
		t.Logf("%s: reproduced by %v", base, match)
	}
}

func harnessMatches(t *testing.T, impl string, got map[string]stTensor, el Element, prof string, m e8m0.ScaleMode) bool {
	for name, sh := range harnessInputs() {
		x := harnessInput(name, sh[0], sh[1])
		for _, d := range []Dim{Dim0, Dim1} {
			key := fmt.Sprintf("%s.dim%d", name, d)
			q, err := Quantize(x, sh[0], sh[1], d, Options{Element: el, Profile: prof, Mode: m})
			if err != nil {
				return false
			}
			if impl == "torchao" {
				c, s := got[key+".codes"], got[key+".scales"]
				if string(c.data) != string(q.Codes) || string(s.data) != string(q.Scales) {
					return false
				}
				continue
			}
			y, _ := Dequantize(q)
			g := got[key+".y"]
			if len(g.data) != 4*len(y) {
				return false
			}
			for i, v := range y {
				w := binary.LittleEndian.Uint32(g.data[4*i:])
				if w != math.Float32bits(v) && !(v != v && math.Float32frombits(w) != math.Float32frombits(w)) {
					return false
				}
			}
		}
	}
	return true
}
