package metal

import (
	"bufio"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/bitexact/bitexact/refimpl/gemv"
)

// Module is one kernel source family: kernels/<Name>.metal, which includes
// the shared kernels/bitexact.h.
type Module struct {
	Name string
	// Doc says what the module holds.
	Doc string
}

// modules lists the kernel families.
var modules = []Module{
	{Name: "e2m1", Doc: "E2M1 encode, nvidia profile, software (branchless thresholds)"},
	{Name: "fp8", Doc: "E4M3 satfinite encode, software (the NVFP4 block-scale cast)"},
	{Name: "nvfp4", Doc: "NVFP4 quantize, canonical recipe: tensor amax (simd_max, atomic max) and per-block quantize"},
	{Name: "mxfp4", Doc: "MXFP4 quantize: E8M0 scales floor/ceil/even/rceil, E2M1 nvidia elements"},
	{Name: "awq", Doc: "AWQ int4 packing, layout awq"},
	{Name: "sparse24", Doc: "2:4 compression (tie rules lower-index, cutlass, signed; row-major or transposed) and the scale transpose"},
	{Name: "gemv_sparse_fp4", Doc: "2:4-sparse NVFP4 MoE GEMV, SIMD K-split, declared schedule"},
	{Name: "gemv_mxfp4", Doc: "MXFP4 x Q8_1 GEMV, SIMD K-split, declared schedule"},
}

// headerFile is the shared header every module includes.
const headerFile = "kernels/bitexact.h"

//go:embed kernels/*.metal kernels/*.h cpu/metal_compat.h cpu/metal_stdlib cpu/driver.cpp
var files embed.FS

// lookupModule finds a module by name.
func lookupModule(name string) (Module, error) {
	for _, m := range modules {
		if m.Name == name {
			return m, nil
		}
	}
	return Module{}, fmt.Errorf("metal: unknown module %q", name)
}

// File is the module's .metal path inside the package.
func (m Module) File() string { return "kernels/" + m.Name + ".metal" }

// Source returns the module's source as one Metal compilation unit: the
// .metal file with its `#include "bitexact.h"` line replaced by the
// header's text (MTLDevice newLibraryWithSource: has no include path). The
// Linux check compiles the same two files with g++, the header through
// -I kernels.
func (m Module) Source() (string, error) {
	src, err := files.ReadFile(m.File())
	if err != nil {
		return "", fmt.Errorf("metal: module %s: %w", m.Name, err)
	}
	hdr, err := files.ReadFile(headerFile)
	if err != nil {
		return "", fmt.Errorf("metal: %w", err)
	}
	const inc = `#include "bitexact.h"`
	s := string(src)
	if strings.Count(s, inc) != 1 {
		return "", fmt.Errorf("metal: %s must include bitexact.h exactly once", m.File())
	}
	return strings.Replace(s, inc, "// ---- bitexact.h ----\n"+string(hdr)+"// ---- end of bitexact.h ----", 1), nil
}

// SourceHash is the SHA-256 (hex) of the module's compilation unit, as
// Source returns it; certificates record it.
func (m Module) SourceHash() (string, error) {
	s, err := m.Source()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:]), nil
}

// declaredSchedule returns the float schedule the module declares on its
// `// bitexact-schedule: ` line, and false when it declares none (a module
// without a float reduction).
func (m Module) declaredSchedule() (gemv.Schedule, bool, error) {
	src, err := files.ReadFile(m.File())
	if err != nil {
		return gemv.Schedule{}, false, fmt.Errorf("metal: module %s: %w", m.Name, err)
	}
	const tag = "// bitexact-schedule: "
	var found []string
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, tag) {
			found = append(found, strings.TrimPrefix(line, tag))
		}
	}
	switch len(found) {
	case 0:
		return gemv.Schedule{}, false, nil
	case 1:
		s, err := gemv.Parse(found[0])
		if err != nil {
			return gemv.Schedule{}, false, fmt.Errorf("metal: %s: %w", m.File(), err)
		}
		return s, true, nil
	}
	return gemv.Schedule{}, false, fmt.Errorf("metal: %s declares %d schedules, want at most one", m.File(), len(found))
}

// Declared float schedules of the GEMV kernels, as refimpl/gemv Schedules:
// the reference evaluates exactly these when it checks the kernels.
// TestDeclaredSchedules holds them equal to the kernels' own
// `bitexact-schedule:` lines.
var (
	// SparseFP4Schedule is gemv_sparse_fp4.metal: 16-element blocks dealt
	// to the 32 lanes of a SIMD group in turn, fused accumulation in
	// float32, simd_sum as a butterfly of width 32, float32 result.
	SparseFP4Schedule = gemv.Schedule{ChunkK: 16, Lanes: 32, GroupK: 16, Fused: true,
		Accum: gemv.FP32, Partial: gemv.FP32, Reduce: gemv.Butterfly, Width: 32, Out: gemv.FP32}
	// MXFP4Schedule is gemv_mxfp4.metal: half blocks of 16 dealt to the
	// 32 lanes (lane = 2*(block mod 16) + half), acc = fma(d, sum, acc),
	// simd_sum as a butterfly of width 32, float32 result.
	MXFP4Schedule = gemv.Schedule{ChunkK: 16, Lanes: 32, GroupK: 16, Fused: true,
		Accum: gemv.FP32, Partial: gemv.FP32, Reduce: gemv.Butterfly, Width: 32, Out: gemv.FP32}
)

// entryPoints maps every kernel function to the module that defines it
// (the claims name the one that certifies each op; some ops dispatch
// helpers too).
var entryPoints = map[string]string{
	"e2m1_nvidia":       "e2m1",
	"e4m3_satfinite":    "fp8",
	"nvfp4_amax":        "nvfp4",
	"nvfp4_quantize":    "nvfp4",
	"mxfp4_quantize":    "mxfp4",
	"awq_pack":          "awq",
	"sparse24_compress": "sparse24",
	"transpose_u8":      "sparse24",
	"sparse_fp4_gemv":   "gemv_sparse_fp4",
	"mxfp4_q8_1_gemv":   "gemv_mxfp4",
}
