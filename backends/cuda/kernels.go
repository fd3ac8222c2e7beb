package cuda

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// NVCCFlags are the nvcc flags every module is compiled with, apart from
// its -arch. They pin the float schedule: no contraction of a*b+c into FMA,
// no flush of subnormals, IEEE division and square root. The Makefile's
// cuda section uses the same string and records it in each PTX header,
// which TestPTXMatchesSources compares with this constant.
const NVCCFlags = "-ptx -std=c++17 -fmad=false -ftz=false -prec-div=true -prec-sqrt=true"

// Module is one kernel source family and its embedded PTX.
type Module struct {
	// Name is the family: kernels/<Name>.cu compiles to ptx/<Name>.ptx.
	Name string
	// Arch is the nvcc -arch of the embedded PTX.
	Arch string
	// MinCC and MaxCC bound the compute capabilities (major*10+minor)
	// that can load the PTX. Architecture-specific ("a") targets load only
	// on their own capability.
	MinCC, MaxCC int
	// Doc says what the module holds.
	Doc string
}

// Modules lists the kernel families, in load order.
var Modules = []Module{
	{Name: "e2m1", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "E2M1 encode: the nvidia profile in software, and the dgx-vllm SM121 software function (third party)"},
	{Name: "fp8", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "FP8 E4M3/E5M2 encode through cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32, decode through cvt.rn.f16x2.{e4m3x2,e5m2x2}"},
	{Name: "nvfp4", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "NVFP4 quantize, refimpl/nvfp4 Canonical recipe: tensor amax, E4M3 block scales, E2M1 elements, optional 128x4 scale layout"},
	{Name: "mxfp4", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "MXFP4 quantize (OCP MX v1.0), E8M0 scale modes floor/ceil/even/rceil, E2M1 nvidia elements"},
	{Name: "awq", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "AWQ W4 quantize + pack (the FORGE pack spec's fused kernel): refimpl/awq Forge quantizer, vLLM AWQ layout"},
	{Name: "sparse24", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "2:4 compress, v7 sparse FP4 GEMV and its partial reduction"},
	{Name: "gemv_mxfp4", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "llama.cpp MXFP4 x Q8_1 GEMV (mmvq, __dp4a)"},
	{Name: "e2m1_hw", Arch: "compute_100a", MinCC: 100, MaxCC: 100,
		Doc: "E2M1 encode through cvt.rn.satfinite.e2m1x2.f32 (sm_100a only: compiled, not runnable on sm_90)"},
	{Name: "util", Arch: "compute_89", MinCC: 89, MaxCC: 999,
		Doc: "harness helpers: a spin kernel for the watchdog test"},
}

//go:embed kernels/*.cu kernels/*.cuh ptx/*.ptx
var files embed.FS

// Sources returns the source files a module's PTX depends on, in hashing
// order: every shared header (kernels/*.cuh, sorted by name, whether or
// not the module includes it: simpler to keep in step with genptx.sh than
// an include scan, at the price of regenerating all PTX when a header
// changes), then the module's own .cu.
func (m Module) Sources() []string {
	hs, _ := fs.Glob(files, "kernels/*.cuh")
	sort.Strings(hs)
	return append(hs, "kernels/"+m.Name+".cu")
}

// SourceHash is the SHA-256 (hex) of the module's sources concatenated in
// Sources order; `make ptx` (genptx.sh) computes the same with
// `cat kernels/*.cuh NAME.cu | sha256sum` in the C locale's name order.
func (m Module) SourceHash() (string, error) {
	h := sha256.New()
	for _, f := range m.Sources() {
		b, err := files.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("cuda: module %s: %w", m.Name, err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PTX returns the module's embedded PTX text.
func (m Module) PTX() (string, error) {
	b, err := files.ReadFile("ptx/" + m.Name + ".ptx")
	if err != nil {
		return "", fmt.Errorf("cuda: module %s has no embedded PTX (run `make ptx` where nvcc is): %w", m.Name, err)
	}
	return string(b), nil
}

// PTXHeader is the provenance that `make ptx` writes at the top of each
// PTX file, plus the compiler identification nvcc writes after it.
type PTXHeader struct {
	Module, SourceSHA256, NVCCFlags string
	// Compiler is nvcc's "Cuda compilation tools, release ..." line.
	Compiler string
	// Target is the .target directive ("sm_89", "sm_100a").
	Target string
}

// Header parses the embedded PTX's provenance lines.
func (m Module) Header() (PTXHeader, error) {
	src, err := m.PTX()
	if err != nil {
		return PTXHeader{}, err
	}
	var h PTXHeader
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "// bitexact-module: "):
			h.Module = strings.TrimPrefix(line, "// bitexact-module: ")
		case strings.HasPrefix(line, "// bitexact-source-sha256: "):
			h.SourceSHA256 = strings.TrimPrefix(line, "// bitexact-source-sha256: ")
		case strings.HasPrefix(line, "// bitexact-nvcc-flags: "):
			h.NVCCFlags = strings.TrimPrefix(line, "// bitexact-nvcc-flags: ")
		case strings.HasPrefix(line, "// Cuda compilation tools"):
			h.Compiler = strings.TrimPrefix(line, "// ")
		case strings.HasPrefix(line, ".target "):
			h.Target = strings.TrimSpace(strings.TrimPrefix(line, ".target "))
			return h, nil
		}
	}
	return h, nil
}

// checkPTX reports whether the embedded PTX was built from the current
// sources with the current flags.
func (m Module) checkPTX() error {
	h, err := m.Header()
	if err != nil {
		return err
	}
	want, err := m.SourceHash()
	if err != nil {
		return err
	}
	if h.Module != m.Name {
		return fmt.Errorf("cuda: ptx/%s.ptx names module %q", m.Name, h.Module)
	}
	if h.SourceSHA256 != want {
		return fmt.Errorf("cuda: ptx/%s.ptx was built from sources with SHA-256 %s, the current sources hash to %s: run `make ptx` (nvcc) and commit the PTX",
			m.Name, h.SourceSHA256, want)
	}
	if wantFlags := NVCCFlags + " -arch=" + m.Arch; h.NVCCFlags != wantFlags {
		return fmt.Errorf("cuda: ptx/%s.ptx was built with nvcc flags %q, want %q: run `make ptx`", m.Name, h.NVCCFlags, wantFlags)
	}
	if !bytes.Contains([]byte(h.Target), []byte(strings.TrimPrefix(m.Arch, "compute_"))) {
		return fmt.Errorf("cuda: ptx/%s.ptx targets %q, want %s", m.Name, h.Target, m.Arch)
	}
	return nil
}

// LookupModule finds a module by name.
func LookupModule(name string) (Module, error) {
	for _, m := range Modules {
		if m.Name == name {
			return m, nil
		}
	}
	return Module{}, fmt.Errorf("cuda: unknown module %q", name)
}
