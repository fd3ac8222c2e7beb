package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/bitexact/bitexact/refimpl/fp8block"
)

// Record is what one stack's quantizer did on the harness inputs on one
// device.
type Record struct {
	// Job is the harness job (stack.variant), Device "cuda" or "cpu".
	Job    string `json:"job"`
	Device string `json:"device"`
	// Recipe names the refimpl/fp8block recipe the record is held to
	// ("te@cpu" for a torch recipe on CPU tensors).
	Recipe string `json:"recipe"`
	// Granularity is 1x128 (groups) or 128x128 (blocks).
	Granularity string `json:"granularity"`
	// Implementation names the code that ran (repository, path, commit,
	// function); Machine the GPU and host; Versions torch and Triton.
	Implementation string            `json:"implementation"`
	Machine        string            `json:"machine"`
	Versions       map[string]string `json:"versions"`
	Date           string            `json:"date"`
	Command        string            `json:"command"`
	// Inputs is InputsDigest of the inputs the job ran on.
	Inputs string `json:"inputs"`
	// NaNScaleFromRecord names a documented way the record's NaN scales
	// differ from its recipe's (see Check); empty for none.
	NaNScaleFromRecord string       `json:"nan_scale_from_record,omitempty"`
	Cases              []CaseRecord `json:"cases"`
}

// CaseRecord is one case's output: the FP8 codes' SHA-256 and a short
// digest per 1x128 group (8 hex digits: the first 4 bytes of the
// group's SHA-256, row-major over groups), every scale's float32 bits
// (8 hex digits each, row-major over the scale matrix), and the SHA-256
// of any other storage of the scales the stack wrote.
type CaseRecord struct {
	Name        string            `json:"name"`
	CodesSHA256 string            `json:"codes_sha256"`
	GroupDigest string            `json:"group_digests"`
	Scales      string            `json:"scales"`
	Storage     map[string]string `json:"storage_sha256,omitempty"`
}

// Digest makes the record of one case from its codes (rows x cols) and
// row-major scales.
func Digest(c Case, codes []uint8, scales []float32) CaseRecord {
	sum := sha256.Sum256(codes)
	var g, s strings.Builder
	for i := 0; i+Group <= len(codes); i += Group {
		h := sha256.Sum256(codes[i : i+Group])
		g.WriteString(hex.EncodeToString(h[:4]))
	}
	for _, v := range scales {
		fmt.Fprintf(&s, "%08x", math.Float32bits(v))
	}
	return CaseRecord{Name: c.Name, CodesSHA256: hex.EncodeToString(sum[:]), GroupDigest: g.String(), Scales: s.String()}
}

// Load reads a record file.
func Load(path string) (Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("%s: %v", path, err)
	}
	return r, nil
}

// The documented differences NaNScaleFromRecord may name.
const (
	// TorchMaximumNaN: torch.max(amax, eps) on CPU tensors (torch's
	// maximum kernel) returns a NaN as 0xffffffff in its vectorized body
	// (max_ps OR-ed with the unordered-compare mask) and as 0x7fc00000
	// in its scalar tail, so which NaN a NaN amax becomes depends on the
	// group's position in the amax tensor and the CPU's vector width,
	// not on the group. Check then takes such a group's NaN from the
	// record's scale and requires every code of the group to be what the
	// recipe makes of it with that NaN as the factor.
	TorchMaximumNaN = "torch-cpu-maximum"
)

// Check holds r to its recipe: every code and every scale's bits, every
// scale storage's digest. It returns the first difference, or nil. A NaN
// scale differing from the recipe's is accepted only under the record's
// NaNScaleFromRecord and as that rule says; used reports whether it was.
func Check(r Record) (used bool, err error) {
	rec, err := fp8block.Lookup(r.Recipe)
	if err != nil {
		return false, err
	}
	if r.Inputs != InputsDigest() {
		return false, fmt.Errorf("%s.%s: recorded on inputs %s, the generator makes %s: rerun the harness", r.Job, r.Device, r.Inputs, InputsDigest())
	}
	if r.NaNScaleFromRecord != "" && r.NaNScaleFromRecord != TorchMaximumNaN {
		return false, fmt.Errorf("%s.%s: unknown NaN rule %q", r.Job, r.Device, r.NaNScaleFromRecord)
	}
	byName := map[string]CaseRecord{}
	for _, c := range r.Cases {
		byName[c.Name] = c
	}
	for _, c := range Cases() {
		cr, ok := byName[c.Name]
		if !ok {
			return used, fmt.Errorf("%s.%s: no case %s", r.Job, r.Device, c.Name)
		}
		gr := 1
		if r.Granularity == "128x128" {
			gr = Group
		} else if r.Granularity != "1x128" {
			return used, fmt.Errorf("%s.%s: granularity %q", r.Job, r.Device, r.Granularity)
		}
		want, err := quantize(c, gr, rec)
		if err != nil {
			return used, err
		}
		got, err := parseScales(cr.Scales)
		if err != nil || len(got) != len(want.Scales) {
			return used, fmt.Errorf("%s.%s %s: %d recorded scales, want %d (%v)", r.Job, r.Device, c.Name, len(got), len(want.Scales), err)
		}
		sc := want.ScaleCols()
		for i, w := range want.Scales {
			g := got[i]
			if math.Float32bits(g) == math.Float32bits(w) {
				continue
			}
			if r.NaNScaleFromRecord == TorchMaximumNaN && g != g && w != w {
				requantize(c, want, i/sc, i%sc, g, rec)
				used = true
				continue
			}
			return used, fmt.Errorf("%s.%s %s: scale %d = %#08x, recipe %s gives %#08x", r.Job, r.Device, c.Name, i, math.Float32bits(g), rec.Name, math.Float32bits(w))
		}
		d := Digest(c, want.Codes, want.Scales)
		if d.CodesSHA256 != cr.CodesSHA256 {
			for gi := 0; gi < len(cr.GroupDigest)/8 && gi < len(d.GroupDigest)/8; gi++ {
				if cr.GroupDigest[8*gi:8*gi+8] != d.GroupDigest[8*gi:8*gi+8] {
					return used, fmt.Errorf("%s.%s %s: the codes of group %d (row %d, columns %d..) differ from recipe %s's", r.Job, r.Device, c.Name, gi, gi/(c.Cols/Group), gi%(c.Cols/Group)*Group, rec.Name)
				}
			}
			return used, fmt.Errorf("%s.%s %s: codes SHA-256 %s, recipe %s gives %s", r.Job, r.Device, c.Name, cr.CodesSHA256, rec.Name, d.CodesSHA256)
		}
		for name, sum := range cr.Storage {
			b, err := storage(name, want.Scales, c.Rows, c.Cols/Group)
			if err != nil {
				return used, fmt.Errorf("%s.%s %s: %v", r.Job, r.Device, c.Name, err)
			}
			if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
				return used, fmt.Errorf("%s.%s %s: the %s storage of the scales differs from refimpl/fp8block's", r.Job, r.Device, c.Name, name)
			}
		}
	}
	return used, nil
}

func quantize(c Case, gr int, r fp8block.Recipe) (fp8block.Quantized, error) {
	if gr == 1 {
		return fp8block.Quantize(c.X, c.Rows, c.Cols, Group, r)
	}
	return fp8block.QuantizeBlocks(c.X, c.Rows, c.Cols, gr, r)
}

// requantize redoes scale (bi, bj) of q with the NaN scale s: the stored
// scale and the factor are that NaN (1/NaN and NaN*x keep it).
func requantize(c Case, q fp8block.Quantized, bi, bj int, s float32, r fp8block.Recipe) {
	q.Scales[bi*q.ScaleCols()+bj] = s
	for i := bi * q.GroupRows; i < min(c.Rows, (bi+1)*q.GroupRows); i++ {
		for j := bj * q.GroupCols; j < min(c.Cols, (bj+1)*q.GroupCols); j++ {
			q.Codes[i*c.Cols+j] = r.Element(c.X[i*c.Cols+j], s)
		}
	}
}

func parseScales(s string) ([]float32, error) {
	if len(s)%8 != 0 {
		return nil, fmt.Errorf("scales: %d hex digits", len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// storage returns the bytes of a named scale storage made from row-major
// mn x sk scales: "storage" is sglang's TMA-aligned column-major buffer
// (fp8block.ToMNMajor, alignment 4, float32 little-endian); "packed" is
// DeepGEMM's pack_ue8m0_to_int (the exponent byte of each scale,
// row-major, four to an int32).
func storage(name string, s []float32, mn, sk int) ([]byte, error) {
	switch name {
	case "storage":
		v, err := fp8block.ToMNMajor(s, mn, sk, 4)
		if err != nil {
			return nil, err
		}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b, nil
	case "packed":
		b := make([]byte, len(s))
		for i, x := range s {
			b[i] = uint8(math.Float32bits(x) >> 23)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown scale storage %q", name)
}
