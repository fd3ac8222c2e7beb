package fp8block

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/fp8"
)

// The device harness (conformance/harness/fp8block) runs each stack's
// quantizer on the inputs harnessCases builds. TestWriteHarnessInputs
// writes them (BITEXACT_FP8BLOCK_WRITE=dir); TestHarnessRecords reads a
// folder of the harness's outputs (BITEXACT_FP8BLOCK_RECORDS=dir) and
// reports, per output file, whether its named recipe reproduces it and
// which variants of the unmeasured parameters (clamp of NaN, cast, NaN
// sign, log2 rule) do.

type harnessCase struct {
	name       string
	rows, cols int
	x          []float32
}

// harnessCases: "edges" puts one hand-made 128-group per row (amax
// 448*2^k, all zero, -0, NaN, Inf, subnormals, scales just above powers
// of two where exp2(ceil(log2)) and the exact ceiling split);
// "shape" is 130 x 640 normal values (M not a multiple of 128, K > 512).
func harnessCases() []harnessCase {
	const g = 128
	rng := rand.New(rand.NewSource(29))
	var rows [][]float32
	row := func(f func(i int) float32) {
		r := make([]float32, g)
		for i := range r {
			r[i] = f(i)
		}
		rows = append(rows, r)
	}
	normal := func(i int) float32 { return float32(rng.NormFloat64()) }
	for k := -3; k <= 3; k++ {
		kk := k
		row(func(i int) float32 {
			if i == 5 {
				return float32(448 * math.Ldexp(1, kk))
			}
			return normal(i)
		})
	}
	row(func(int) float32 { return 0 })
	row(func(i int) float32 { return negZero })
	row(func(i int) float32 {
		if i == 3 {
			return nan
		}
		return normal(i)
	})
	row(func(i int) float32 {
		if i == 0 {
			return f32(0xffc00000)
		}
		return normal(i)
	})
	row(func(i int) float32 {
		if i == 7 {
			return inf
		}
		return normal(i)
	})
	row(func(i int) float32 {
		if i == 7 {
			return -inf
		}
		return normal(i)
	})
	row(func(i int) float32 { return f32(uint32(i) * 1000) }) // subnormals
	// amax = 448 * 2^e * (1 + j*2^-23): scale just above 2^e.
	for _, e := range []int{-9, -5, -4, -1, 1, 4} {
		for _, j := range []uint32{1, 2, 8, 64} {
			ee, jj := e, j
			row(func(i int) float32 {
				if i == 1 {
					return f32(math.Float32bits(float32(448*math.Ldexp(1, ee))) + jj)
				}
				return float32(rng.Float64() * 448 * math.Ldexp(1, ee))
			})
		}
	}
	for len(rows)%8 != 0 {
		row(normal)
	}
	edges := harnessCase{name: "edges", rows: len(rows), cols: g}
	for _, r := range rows {
		edges.x = append(edges.x, r...)
	}
	shape := harnessCase{name: "shape", rows: 130, cols: 640, x: make([]float32, 130*640)}
	for i := range shape.x {
		shape.x[i] = float32(rng.NormFloat64() * math.Ldexp(1, rng.Intn(12)-6))
	}
	return []harnessCase{edges, shape}
}

// writeSafetensors writes F32 tensors (name -> shape, values) as a
// safetensors file.
func writeSafetensors(path string, cases []harnessCase) error {
	header := map[string]any{}
	var body []byte
	for _, c := range cases {
		off := len(body)
		for _, v := range c.x {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
		}
		header[c.name] = map[string]any{"dtype": "F32", "shape": []int{c.rows, c.cols}, "data_offsets": []int{off, len(body)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), body...)
	return os.WriteFile(path, out, 0o644)
}

func TestWriteHarnessInputs(t *testing.T) {
	dir := os.Getenv("BITEXACT_FP8BLOCK_WRITE")
	if dir == "" {
		t.Skip("set BITEXACT_FP8BLOCK_WRITE=dir to write the device harness inputs")
	}
	if err := writeSafetensors(filepath.Join(dir, "inputs.safetensors"), harnessCases()); err != nil {
		t.Fatal(err)
	}
}

func TestHarnessCasesShape(t *testing.T) {
	for _, c := range harnessCases() {
		if len(c.x) != c.rows*c.cols || c.cols%128 != 0 {
			t.Errorf("case %s: %d values for %d x %d (cols must be a multiple of 128)", c.name, len(c.x), c.rows, c.cols)
		}
	}
}

type stTensor struct {
	dtype string
	shape []int
	data  []byte
}

func readSafetensors(path string) (map[string]stTensor, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("%s: truncated", path)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, nil, fmt.Errorf("%s: header length %d beyond the file", path, n)
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	body := b[8+n:]
	meta := map[string]string{}
	out := map[string]stTensor{}
	for k, v := range hdr {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &meta); err != nil {
				return nil, nil, fmt.Errorf("%s: metadata: %v", path, err)
			}
			continue
		}
		var h struct {
			DType   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		if err := json.Unmarshal(v, &h); err != nil {
			return nil, nil, fmt.Errorf("%s: tensor %s: %v", path, k, err)
		}
		if h.Offsets[0] < 0 || h.Offsets[1] < h.Offsets[0] || h.Offsets[1] > len(body) {
			return nil, nil, fmt.Errorf("%s: tensor %s: offsets %v outside the body", path, k, h.Offsets)
		}
		out[k] = stTensor{h.DType, h.Shape, body[h.Offsets[0]:h.Offsets[1]]}
	}
	return out, meta, nil
}

// variants returns r and its variants over the parameters a record has
// to settle.
func variants(r Recipe) []Recipe {
	var out []Recipe
	pow2 := []Pow2{r.Pow2}
	if r.Pow2 == Pow2Log2Ceil || r.Pow2 == Pow2BitCeil {
		pow2 = []Pow2{Pow2Log2Ceil, Pow2BitCeil}
	}
	for _, p := range pow2 {
		for _, c := range []Clamp{NoClamp, ClampKeepsNaN, ClampNaNToLow, ClampNaNToSignedMax} {
			for _, cast := range []fp8.Profile{fp8.Satfinite, fp8.NoSat} {
				for _, n := range []NaNRule{NaNGPU, NaNHost} {
					for _, ap := range []Apply{r.Apply, Divide, MulRecip} {
						if (ap == MulScale) != (r.Apply == MulScale) {
							continue
						}
						for _, am := range []AmaxNaN{AmaxIgnoresNaN, AmaxPropagatesNaN} {
							v := r
							v.Pow2, v.Clamp, v.Cast, v.NaN, v.AmaxNaN, v.Apply = p, c, cast, n, am, ap
							v.Name = fmt.Sprintf("pow2=%d clamp=%d cast=%s nan=%d amax=%d apply=%d", p, c, cast.Name, n, am, ap)
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	return out
}

// mismatch compares the record's codes and scales of one case with r's;
// "" when equal. A NaN scale matches any NaN.
func mismatch(c harnessCase, rec map[string]stTensor, blocks bool, r Recipe) string {
	q, s := rec[c.name+".q"], rec[c.name+".s"]
	var want Quantized
	var err error
	if blocks {
		want, err = QuantizeBlocks(c.x, c.rows, c.cols, 128, r)
	} else {
		want, err = Quantize(c.x, c.rows, c.cols, 128, r)
	}
	if err != nil {
		return err.Error()
	}
	if len(q.data) != len(want.Codes) || len(s.data) != 4*len(want.Scales) {
		return fmt.Sprintf("%s: %d codes and %d scale bytes, want %d and %d", c.name, len(q.data), len(s.data), len(want.Codes), 4*len(want.Scales))
	}
	for i, w := range want.Codes {
		if q.data[i] != w {
			return fmt.Sprintf("%s: code (%d, %d) of %g [%#08x] = %#02x, recipe %#02x", c.name, i/c.cols, i%c.cols, c.x[i], math.Float32bits(c.x[i]), q.data[i], w)
		}
	}
	for i, w := range want.Scales {
		g := math.Float32frombits(binary.LittleEndian.Uint32(s.data[4*i:]))
		if g != w && !(g != g && w != w) {
			return fmt.Sprintf("%s: scale %d = %g [%#08x], recipe %g [%#08x]", c.name, i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
	return ""
}

func TestHarnessRecords(t *testing.T) {
	dir := os.Getenv("BITEXACT_FP8BLOCK_RECORDS")
	if dir == "" {
		t.Skip("set BITEXACT_FP8BLOCK_RECORDS=dir (the harness's untarred outputs) to compare records with the recipes")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no .safetensors in %s", dir)
	}
	cases := harnessCases()
	for _, f := range files {
		rec, meta, err := readSafetensors(f)
		if err != nil {
			t.Error(err)
			continue
		}
		if meta["error"] != "" {
			t.Logf("%s: the harness could not run it: %s", filepath.Base(f), meta["error"])
			continue
		}
		r, err := Lookup(meta["recipe"])
		if meta["device"] == "cpu" {
			r.NaN = NaNHost
		} else if r.From == DequantScale {
			r.ScaleDiv = MulRecipMax
		}
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		blocks := meta["granularity"] == "128x128"
		var present []harnessCase
		for _, c := range cases {
			if _, ok := rec[c.name+".q"]; ok {
				present = append(present, c)
			}
		}
		check := func(r Recipe) string {
			for _, c := range present {
				if m := mismatch(c, rec, blocks, r); m != "" {
					return m
				}
			}
			return ""
		}
		for _, c := range present {
			if m := layoutMismatch(c, rec); m != "" {
				t.Errorf("%s: %s", filepath.Base(f), m)
			}
		}
		named := check(r)
		var match []string
		for _, v := range variants(r) {
			if check(v) == "" {
				match = append(match, v.Name)
			}
		}
		status := "conforms"
		if named != "" {
			status = "DIFFERS (" + named + ")"
		}
		t.Logf("%s [%s, %s]: recipe %s %s; variants that reproduce it: %s", filepath.Base(f), meta["device"], meta["granularity"], r.Name, status, strings.Join(match, "; "))
	}
}

// layoutMismatch checks a record's scale storages against its logical
// scales: "<case>.storage" (sglang's TMA-aligned column-major buffer)
// through FromMNMajor with alignment 4, "<case>.packed" (DeepGEMM's
// pack_ue8m0_to_int: row-major, four exponent bytes per int32) byte by
// byte.
func layoutMismatch(c harnessCase, rec map[string]stTensor) string {
	s := rec[c.name+".s"]
	logical := make([]float32, len(s.data)/4)
	for i := range logical {
		logical[i] = math.Float32frombits(binary.LittleEndian.Uint32(s.data[4*i:]))
	}
	sk := c.cols / 128
	if st, ok := rec[c.name+".storage"]; ok {
		v := make([]float32, len(st.data)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(st.data[4*i:]))
		}
		back, err := FromMNMajor(v, c.rows, sk, 4)
		if err != nil {
			return c.name + ".storage: " + err.Error()
		}
		for i := range back {
			if math.Float32bits(back[i]) != math.Float32bits(logical[i]) {
				return fmt.Sprintf("%s.storage: scale %d = %g in the TMA-aligned column-major storage, %g logical", c.name, i, back[i], logical[i])
			}
		}
	}
	if p, ok := rec[c.name+".packed"]; ok {
		if len(p.data) != len(logical) {
			return fmt.Sprintf("%s.packed: %d bytes for %d scales", c.name, len(p.data), len(logical))
		}
		for i, v := range logical {
			if p.data[i] != uint8(math.Float32bits(v)>>23) {
				return fmt.Sprintf("%s.packed: byte %d = %#02x, scale %g has exponent %#02x", c.name, i, p.data[i], v, math.Float32bits(v)>>23)
			}
		}
	}
	return ""
}
