package mx

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
)

// The committed records of the device harness (conformance/harness/
// mx-family): per output tensor the SHA-256 of the bytes the library
// wrote, and the bits its NaNs had. TestRecords recomputes every tensor
// from the inputs the Go generator rebuilds, under the profile the record
// names, and compares digests: no GPU, no environment variable.

const recordsDir = "../../conformance/harness/mx-family/corpus-records"

type mxRecord struct {
	Implementation string `json:"implementation"`
	Call           string `json:"call"`
	Devices        string `json:"devices"`
	Torch          string `json:"torch"`
	Date           string `json:"date"`
	Command        string `json:"command"`
	// Inputs maps each case to the SHA-256 of its float32 little-endian
	// bytes ([rows, cols] row-major), as TestWriteHarnessInputs writes them.
	Inputs map[string]string `json:"inputs"`
	Files  []mxRecordFile    `json:"files"`
}

type mxRecordFile struct {
	File    string `json:"file"`
	Element string `json:"element"`
	Round   string `json:"round"`
	Device  string `json:"device"`
	// Profile is the refimpl/mx element profile claimed to reproduce the
	// file (with the scale mode e8m0.Microxcaling7bc41952).
	Profile string `json:"profile"`
	// SHA256 is the digest of the whole .safetensors file.
	SHA256  string           `json:"sha256"`
	Tensors []mxRecordTensor `json:"tensors"`
}

type mxRecordTensor struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	// NaNs counts the NaN outputs; NaN gives the bits every one of them
	// had (hex), the device's choice (see Microxcaling.QDQ).
	NaNs int    `json:"nans"`
	NaN  string `json:"nan,omitempty"`
}

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func f32bytes(x []float32) []byte {
	b := make([]byte, 0, 4*len(x))
	for _, v := range x {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

var mxcElementNames = map[string]string{"fp8_e4m3": "e4m3", "fp8_e5m2": "e5m2", "fp6_e2m3": "e2m3", "fp6_e3m2": "e3m2", "int8": "int8"}

// TestWriteRecords writes corpus-records/microxcaling-7bc41952.json from
// the unpacked device outputs in $BITEXACT_MX_RECORD_FROM (the mx-out
// folder of go.sh's mx.tar.gz).
func TestWriteRecords(t *testing.T) {
	dir := os.Getenv("BITEXACT_MX_RECORD_FROM")
	if dir == "" {
		t.Skip("set BITEXACT_MX_RECORD_FROM to the unpacked mx-out folder")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "microxcaling.*.safetensors"))
	sort.Strings(files)
	rec := mxRecord{
		Implementation: "microsoft/microxcaling@7bc41952de394f5cc5e782baf132e7c7542eb4e4",
		Call:           "_quantize_mx(x, 8, ELEMENT, shared_exp_method=\"max\", axes=[-1 for dim0, 0 for dim1], block_size=32, round=ROUND, flush_fp32_subnorms=False, custom_cuda=False)",
		Devices:        "cpu: the host of an NVIDIA H200 (x86-64); cuda: NVIDIA H200, CUDA 13.0",
		Torch:          "2.11.0+cu130",
		Date:           "2026-11-27",
		Command:        "run(carry=[\".carry/h28mx\"], command=\"cd .carry/h28mx && PYTHONUNBUFFERED=1 bash go.sh\") with the carry folder README.md describes",
		Inputs:         map[string]string{},
	}
	cases := map[string]bool{}
	for _, f := range files {
		parts := strings.Split(strings.TrimSuffix(filepath.Base(f), ".safetensors"), ".")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readST(f)
		if err != nil {
			t.Fatal(err)
		}
		prof := MicroxcalingEven
		if parts[2] == "nearest" {
			prof = MicroxcalingNearest
		}
		rf := mxRecordFile{File: filepath.Base(f), Element: mxcElementNames[parts[1]], Round: parts[2], Device: parts[3], Profile: prof, SHA256: digest(raw)}
		var names []string
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			tt := mxRecordTensor{Name: n, SHA256: digest(got[n].data)}
			bitsSeen := map[uint32]bool{}
			for i := 0; i+4 <= len(got[n].data); i += 4 {
				if w := binary.LittleEndian.Uint32(got[n].data[i:]); w&0x7fffffff > 0x7f800000 {
					tt.NaNs++
					bitsSeen[w] = true
				}
			}
			if len(bitsSeen) > 1 {
				t.Fatalf("%s %s: NaNs of %d bit patterns: the record holds one per tensor", rf.File, n, len(bitsSeen))
			}
			for w := range bitsSeen {
				tt.NaN = fmt.Sprintf("0x%08x", w)
			}
			rf.Tensors = append(rf.Tensors, tt)
			cases[strings.SplitN(n, ".", 2)[0]] = true
		}
		rec.Files = append(rec.Files, rf)
	}
	for c := range cases {
		sh, ok := harnessInputs()[c]
		if !ok {
			t.Fatalf("case %s is not a harness input", c)
		}
		rec.Inputs[c] = digest(f32bytes(harnessInput(c, sh[0], sh[1])))
	}
	b, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(recordsDir, "microxcaling-7bc41952.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readMXRecord(t *testing.T, name string) mxRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var r mxRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for c, want := range r.Inputs {
		sh, ok := harnessInputs()[c]
		if !ok {
			t.Fatalf("%s: case %s is not a harness input", name, c)
		}
		if got := digest(f32bytes(harnessInput(c, sh[0], sh[1]))); got != want {
			t.Fatalf("%s: input %s is now %.12s, recorded on %.12s: the generator changed; rerun the harness", name, c, got, want)
		}
	}
	return r
}

// microxcalingOutput is what Microxcaling computes for one recorded
// tensor ("<case>.dim<d>.y"), its NaNs written with the bits nan.
func microxcalingOutput(t *testing.T, f mxRecordFile, tensor string, m Microxcaling, nan uint32) []byte {
	t.Helper()
	parts := strings.Split(tensor, ".")
	if len(parts) != 3 || parts[2] != "y" {
		t.Fatalf("%s: tensor %q is not <case>.dim<d>.y", f.File, tensor)
	}
	sh := harnessInputs()[parts[0]]
	d := Dim0
	if parts[1] == "dim1" {
		d = Dim1
	}
	el, err := LookupElement(f.Element)
	if err != nil {
		t.Fatal(err)
	}
	y, err := m.QDQ(harnessInput(parts[0], sh[0], sh[1]), sh[0], sh[1], d, el, nan)
	if err != nil {
		t.Fatal(err)
	}
	return f32bytes(y)
}

func recordedNaN(t *testing.T, tt mxRecordTensor) uint32 {
	if tt.NaN == "" {
		return 0x7fc00000 // no NaN in the tensor: any bits give the digest
	}
	v, err := strconv.ParseUint(tt.NaN, 0, 32)
	if err != nil {
		t.Fatalf("%s: nan %q: %v", tt.Name, tt.NaN, err)
	}
	return uint32(v)
}

// TestRecords holds Microxcaling under each file's profile to what
// microxcaling 7bc41952 wrote on the CPU and on CUDA: every output tensor
// bit for bit. The NaN bits are the device's: on CUDA every NaN is
// 0x7FFFFFFF (the nan=cuda convention), on the CPU the bits recorded per
// tensor (0x7FC00000 where torch's scalar loop made them, 0xFFFFFFFF
// where its vectorized loop did).
func TestRecords(t *testing.T) {
	r := readMXRecord(t, "microxcaling-7bc41952.json")
	if len(r.Files) != 20 {
		t.Errorf("record has %d files, want 20 (5 elements x 2 roundings x 2 devices)", len(r.Files))
	}
	for _, f := range r.Files {
		t.Run(f.File, func(t *testing.T) {
			m := Microxcaling{Nearest: f.Profile == MicroxcalingNearest}
			if f.Profile != MicroxcalingEven && f.Profile != MicroxcalingNearest {
				t.Fatalf("profile %q is not a microxcaling profile", f.Profile)
			}
			if len(f.Tensors) != 2*len(r.Inputs) {
				t.Errorf("%d tensors, want dim0 and dim1 of %d cases", len(f.Tensors), len(r.Inputs))
			}
			for _, tt := range f.Tensors {
				nan := recordedNaN(t, tt)
				if f.Device == "cuda" && tt.NaNs > 0 && nan != 0x7fffffff {
					t.Errorf("%s: CUDA NaN bits %s, the nan=cuda convention is 0x7fffffff", tt.Name, tt.NaN)
				}
				got := digest(microxcalingOutput(t, f, tt.Name, m, nan))
				if got != tt.SHA256 {
					t.Errorf("%s: %s gives %.12s, microxcaling wrote %.12s", tt.Name, f.Profile, got, tt.SHA256)
				}
			}
		})
	}
}

// TestRecordsSeparate: the records tell microxcaling's emulation from the
// OCP encoders it approximates (so TestRecords could fail): the family's
// quantize-dequantize under microxcaling's own scale mode and the
// satfinite element profile differs from every FP8, FP6 and INT8 record
// (the sign of zero), and so does Floor, the OCP scale, on some tensor.
func TestRecordsSeparate(t *testing.T) {
	r := readMXRecord(t, "microxcaling-7bc41952.json")
	for _, f := range r.Files {
		el, _ := LookupElement(f.Element)
		for _, mode := range []e8m0.ScaleMode{e8m0.Microxcaling7bc41952, e8m0.Floor} {
			differ := false
			for _, tt := range f.Tensors {
				parts := strings.Split(tt.Name, ".")
				sh := harnessInputs()[parts[0]]
				if parts[1] == "dim1" && sh[0]%BlockSize != 0 {
					continue // the family takes whole blocks only
				}
				d := Dim0
				if parts[1] == "dim1" {
					d = Dim1
				}
				q, err := Quantize(harnessInput(parts[0], sh[0], sh[1]), sh[0], sh[1], d, Options{Element: el, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				y, _ := Dequantize(q)
				for i := range y {
					if y[i] != y[i] {
						y[i] = math.Float32frombits(recordedNaN(t, tt))
					}
				}
				if digest(f32bytes(y)) != tt.SHA256 {
					differ = true
					break
				}
			}
			if !differ {
				t.Errorf("%s: the family's default profile under %s reproduces the record: it cannot tell microxcaling's emulation apart", f.File, mode.Name)
			}
		}
	}
}
