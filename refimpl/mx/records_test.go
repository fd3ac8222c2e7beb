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
	// Round is microxcaling's round argument, Mode torchao's
	// ScaleCalculationMode (lower case).
	Round  string `json:"round,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Device string `json:"device"`
	// Profile is the refimpl/mx profile claimed to reproduce the file:
	// a microxcaling element profile (with the scale mode
	// e8m0.Microxcaling7bc41952) or a TorchAO profile name.
	Profile string `json:"profile"`
	// SHA256 is the digest of the whole .safetensors file.
	SHA256 string `json:"sha256"`
	// Skipped are the calls the harness did not make, with its reason.
	Skipped map[string]string `json:"skipped,omitempty"`
	Tensors []mxRecordTensor  `json:"tensors"`
}

type mxRecordTensor struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	// NaNs counts the NaN outputs; NaN gives the bits every one of them
	// had (hex), the device's choice (see Microxcaling.QDQ). For torchao's
	// U8 tensors NaNs counts the NaN codes: E8M0 0xFF scales and FP8
	// element NaNs (FP6 has none).
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

// TestWriteRecords writes corpus-records/microxcaling-7bc41952.json and
// corpus-records/torchao-0.18-5f2baf9d.json from the unpacked device
// outputs in $BITEXACT_MX_RECORD_FROM (the mx-out folder of go.sh's
// mx.tar.gz).
func TestWriteRecords(t *testing.T) {
	dir := os.Getenv("BITEXACT_MX_RECORD_FROM")
	if dir == "" {
		t.Skip("set BITEXACT_MX_RECORD_FROM to the unpacked mx-out folder")
	}
	const devices = "cpu: the host of an NVIDIA H200 (x86-64); cuda: NVIDIA H200, CUDA 13.0"
	const command = "run(carry=[\".carry/h28rec\"], command=\"cd .carry/h28rec && PYTHONUNBUFFERED=1 bash go.sh\") with the carry folder README.md describes"
	writeMXRecord(t, dir, "microxcaling", "microxcaling-7bc41952.json", mxRecord{
		Implementation: "microsoft/microxcaling@7bc41952de394f5cc5e782baf132e7c7542eb4e4",
		Call:           "_quantize_mx(x, 8, ELEMENT, shared_exp_method=\"max\", axes=[-1 for dim0, 0 for dim1], block_size=32, round=ROUND, flush_fp32_subnorms=False, custom_cuda=False)",
		Devices:        devices, Torch: "2.11.0+cu130", Date: "2026-11-27", Command: command,
	})
	writeMXRecord(t, dir, "torchao", "torchao-0.18-5f2baf9d.json", mxRecord{
		Implementation: "pytorch/ao@5f2baf9d575cf732362594c998c399902942531f (v0.18.0)",
		Call:           "torchao.prototype.mx_formats.mx_tensor.to_mx(x, ELEMENT, 32, MODE) (dim0) and to_mx(x.t().contiguous(), ELEMENT, 32, MODE) (dim1), eager; ELEMENT torch.float8_e4m3fn, torch.float8_e5m2, DTYPE_FP6_E2M3, DTYPE_FP6_E3M2 (unpacked, one code per byte); codes and E8M0 scales as uint8",
		Devices:        devices, Torch: "2.11.0+cu130", Date: "2026-11-27", Command: command,
	})
}

// writeMXRecord writes the record of every <impl>.*.safetensors in dir.
func writeMXRecord(t *testing.T, dir, impl, name string, rec mxRecord) {
	files, _ := filepath.Glob(filepath.Join(dir, impl+".*.safetensors"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no %s outputs in %s", impl, dir)
	}
	rec.Inputs = map[string]string{}
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
		rf := mxRecordFile{File: filepath.Base(f), Device: parts[3], SHA256: digest(raw)}
		if impl == "microxcaling" {
			rf.Element, rf.Round, rf.Profile = mxcElementNames[parts[1]], parts[2], MicroxcalingEven
			if parts[2] == "nearest" {
				rf.Profile = MicroxcalingNearest
			}
		} else {
			rf.Element, rf.Mode = parts[1], parts[2]
			rf.Profile = "torchao-0.18-" + parts[2] + "-" + parts[3]
			var meta struct {
				Skipped map[string]string `json:"skipped"`
				Errors  map[string]string `json:"errors"`
			}
			if b, err := os.ReadFile(f + ".json"); err != nil || json.Unmarshal(b, &meta) != nil {
				t.Fatalf("%s: no readable metadata beside it", rf.File)
			}
			if len(meta.Errors) > 0 {
				t.Fatalf("%s: the run has errors %v", rf.File, meta.Errors)
			}
			rf.Skipped = meta.Skipped
		}
		var names []string
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			rf.Tensors = append(rf.Tensors, recordTensor(t, rf, n, got[n]))
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
	if err := os.WriteFile(filepath.Join(recordsDir, name), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordTensor digests one tensor and counts its NaNs: float32 NaNs (one
// bit pattern per tensor, recorded) for F32; for U8, 0xFF scales and the
// FP8 element NaNs.
func recordTensor(t *testing.T, rf mxRecordFile, n string, st stTensor) mxRecordTensor {
	tt := mxRecordTensor{Name: n, SHA256: digest(st.data)}
	if st.DType == "U8" {
		tt.NaNs = u8NaNs(n, rf.Element, st.data)
		return tt
	}
	bitsSeen := map[uint32]bool{}
	for i := 0; i+4 <= len(st.data); i += 4 {
		if w := binary.LittleEndian.Uint32(st.data[i:]); w&0x7fffffff > 0x7f800000 {
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
	return tt
}

// u8NaNs counts the NaN codes of a torchao tensor "<case>.dim<d>.codes"
// or ".scales" of element el.
func u8NaNs(name, el string, b []byte) int {
	n := 0
	for _, c := range b {
		switch {
		case strings.HasSuffix(name, ".scales"):
			if c == NaNScale {
				n++
			}
		case el == E4M3.Name:
			if c&0x7f == 0x7f {
				n++
			}
		case el == E5M2.Name:
			if c&0x7f > 0x7c {
				n++
			}
		}
	}
	return n
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
// (the sign of zero), and so does Floor, the OCP scale, on some tensor;
// and the other rounding ("even" for a "nearest" file and back) differs
// on the ties case, for every element and device.
func TestRecordsSeparate(t *testing.T) {
	r := readMXRecord(t, "microxcaling-7bc41952.json")
	if _, ok := r.Inputs["ties_64x64"]; !ok {
		t.Fatal("the record has no ties case: it cannot tell round even from nearest")
	}
	for _, f := range r.Files {
		el, _ := LookupElement(f.Element)
		other := Microxcaling{Nearest: f.Profile != MicroxcalingNearest}
		for _, tt := range f.Tensors {
			if !strings.HasPrefix(tt.Name, "ties_64x64.") {
				continue
			}
			if digest(microxcalingOutput(t, f, tt.Name, other, recordedNaN(t, tt))) == tt.SHA256 {
				t.Errorf("%s %s: the other rounding (nearest %v) reproduces it", f.File, tt.Name, other.Nearest)
			}
		}
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

// torchaoOutput is what p computes for one recorded torchao tensor
// ("<case>.dim<d>.codes" or ".scales").
func torchaoOutput(t *testing.T, f mxRecordFile, tensor string, p TorchAO) []byte {
	t.Helper()
	cs, d, what, ok := harnessCase(tensor)
	if !ok || what != "codes" && what != "scales" {
		t.Fatalf("%s: tensor %q is not <case>.dim<d>.codes or .scales", f.File, tensor)
	}
	el, err := LookupElement(f.Element)
	if err != nil {
		t.Fatal(err)
	}
	sh := harnessInputs()[cs]
	q, err := p.Quantize(harnessInput(cs, sh[0], sh[1]), sh[0], sh[1], d, el)
	if err != nil {
		t.Fatal(err)
	}
	if what == "codes" {
		return q.Codes
	}
	return q.Scales
}

// TestRecordsTorchAO holds each TorchAO profile to what torchao v0.18.0's
// to_mx wrote on its device: every code and scale tensor bit for bit (4
// elements x 4 modes x CPU and CUDA). The one call the harness did not
// make is the dim1 cast of the 16-row edge case (to_mx takes no last
// dimension of 16).
func TestRecordsTorchAO(t *testing.T) {
	r := readMXRecord(t, "torchao-0.18-5f2baf9d.json")
	if len(r.Files) != 32 {
		t.Errorf("record has %d files, want 32 (4 elements x 4 modes x 2 devices)", len(r.Files))
	}
	for _, f := range r.Files {
		t.Run(f.File, func(t *testing.T) {
			p, err := LookupTorchAO(f.Profile)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != "torchao-0.18-"+f.Mode+"-"+f.Device {
				t.Fatalf("profile %s recorded for mode %s on %s", f.Profile, f.Mode, f.Device)
			}
			want := 0
			for c, sh := range harnessInputs() {
				if _, ok := r.Inputs[c]; !ok {
					continue
				}
				want += 2
				if sh[0]%BlockSize == 0 {
					want += 2
				} else if f.Skipped[c+".dim1"] == "" {
					t.Errorf("%s.dim1: to_mx refuses it, but the record does not say it was skipped", c)
				}
			}
			if len(f.Tensors) != want {
				t.Errorf("%d tensors, want %d", len(f.Tensors), want)
			}
			for _, tt := range f.Tensors {
				out := torchaoOutput(t, f, tt.Name, p)
				if got := digest(out); got != tt.SHA256 {
					t.Errorf("%s: %s gives %.12s, torchao wrote %.12s", tt.Name, p.Name(), got, tt.SHA256)
				}
				if n := u8NaNs(tt.Name, f.Element, out); n != tt.NaNs {
					t.Errorf("%s: %d NaN codes, the record has %d", tt.Name, n, tt.NaNs)
				}
			}
		})
	}
}

// TestRecordsTorchAOSeparate: the torchao record tells its profiles from
// the family's encoders and from each other (so TestRecordsTorchAO could
// fail). Quantize under the same torchao scale mode and the element's
// default profile differs from every file but the FP8 RCEIL ones (a NaN
// block: torchao divides its finite elements by +Inf to ±0 under FLOOR,
// CEIL and EVEN, and codes a CPU NaN's payload in FP6); the other
// device's profile differs from every file but the FP8 RCEIL ones (there
// the NaNs are all the multiply's, whose sign the FP8 code keeps and
// both devices make positive). The records hold no block whose scale
// code is 0, so the 2^-126 clamp and RCEIL's multiply by 1 are read from
// the source, not measured (TestTorchAOEdges states them).
func TestRecordsTorchAOSeparate(t *testing.T) {
	r := readMXRecord(t, "torchao-0.18-5f2baf9d.json")
	reproduces := func(f mxRecordFile, out func(tensor string) []byte) bool {
		for _, tt := range f.Tensors {
			if digest(out(tt.Name)) != tt.SHA256 {
				return false
			}
		}
		return true
	}
	for _, f := range r.Files {
		p, err := LookupTorchAO(f.Profile)
		if err != nil {
			t.Fatal(err)
		}
		el, _ := LookupElement(f.Element)
		fp8RCeil := el.Bits == 8 && f.Mode == "rceil"
		other := p
		other.CUDA = !p.CUDA
		if got := reproduces(f, func(n string) []byte { return torchaoOutput(t, f, n, other) }); got != fp8RCeil {
			t.Errorf("%s: %s reproduces it: %v, want %v", f.File, other.Name(), got, fp8RCeil)
		}
		family := func(n string) []byte {
			cs, d, what, _ := harnessCase(n)
			sh := harnessInputs()[cs]
			q, err := Quantize(harnessInput(cs, sh[0], sh[1]), sh[0], sh[1], d, Options{Element: el, Mode: p.Mode})
			if err != nil {
				t.Fatal(err)
			}
			if what == "codes" {
				return q.Codes
			}
			return q.Scales
		}
		if got := reproduces(f, family); got != fp8RCeil {
			t.Errorf("%s: Quantize under %s and the %s default profile reproduces it: %v, want %v", f.File, p.Mode.Name, el.Name, got, fp8RCeil)
		}
	}
}
