package cuda

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/gemv"
)

// TestDeclaredSchedules pins the declared kernel schedules to the named
// reference schedules that model the original kernels (refimpl/gemv
// docs: sparse-v7 is dgx-vllm's v7 + torch .sum, mmvq is llama.cpp's
// mul_mat_vec_q).
func TestDeclaredSchedules(t *testing.T) {
	cases := []struct {
		name     string
		declared gemv.Schedule
	}{
		{"sparse-v7", V7Schedule(true, V7ReduceWidth)},
		{"sparse-v7-nofma", V7Schedule(false, V7ReduceWidth)},
		{"sparse-v7-seq", V7Schedule(true, 1)},
		{"mmvq", MMVQSchedule(true)},
		{"mmvq-nofma", MMVQSchedule(false)},
	}
	for _, c := range cases {
		want, err := gemv.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.declared.Validate(); err != nil {
			t.Errorf("%s: declared schedule invalid: %v", c.name, err)
		}
		if c.declared != want {
			t.Errorf("declared %s = %s, reference %s = %s", c.name, c.declared, c.name, want)
		}
	}
}

// TestLaunchConstantsMatchKernels pins the Go launch constants to the
// #define each kernel is compiled with: the Go side sizes grids and
// declares schedules from its copy, so a kernel edited alone would launch
// with the wrong shape or be held to the wrong schedule.
func TestLaunchConstantsMatchKernels(t *testing.T) {
	cases := []struct {
		file, macro string
		goName      string
		goValue     int
		relation    string // "==" or ">=": the macro against the Go constant
	}{
		{"kernels/sparse24.cu", "V7_THREADS", "v7Threads", v7Threads, "=="},
		{"kernels/sparse24.cu", "V7_TILE_K", "v7TileK", v7TileK, "=="},
		{"kernels/sparse24.cu", "V7_MAX_TILES", "v7MaxTiles", v7MaxTiles, "=="},
		{"kernels/sparse24.cu", "V7_MIN_BLOCKS", "v7BlocksPerSM", v7BlocksPerSM, "=="},
		// the Go side may launch fewer rows per block than the kernel's most
		{"kernels/gemv_mxfp4.cu", "MMVQ_MAX_ROWS", "mmvqRows", mmvqRows, ">="},
	}
	for _, c := range cases {
		src, err := files.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		v, err := defineValue(string(src), c.macro)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if ok := v == c.goValue || (c.relation == ">=" && v > c.goValue); !ok {
			t.Errorf("%s: #define %s %d, but %s = %d (want %s %s)", c.file, c.macro, v, c.goName, c.goValue, c.macro, c.relation+" "+c.goName)
		}
	}
}

func TestDefineValue(t *testing.T) {
	src := "#define A 3  // three\n#ifndef B\n#define B 12u\n#endif\n#define C (A + 1)\n"
	for _, c := range []struct {
		macro string
		want  int
		ok    bool
	}{{"A", 3, true}, {"B", 12, true}, {"C", 0, false}, {"D", 0, false}} {
		got, err := defineValue(src, c.macro)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("defineValue(%s) = %d, %v; want %d, ok %v", c.macro, got, err, c.want, c.ok)
		}
	}
}

// defineValue returns the integer a kernel source #defines macro to: the
// first token after the name, decimal, with an optional u suffix. An
// expression, a missing macro or a second definition is an error.
func defineValue(src, macro string) (int, error) {
	found, v := false, 0
	for _, line := range strings.Split(src, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "#define" || f[1] != macro {
			continue
		}
		if found {
			return 0, fmt.Errorf("#define %s appears twice", macro)
		}
		n, err := strconv.Atoi(strings.TrimSuffix(f[2], "u"))
		if err != nil {
			return 0, fmt.Errorf("#define %s %s is not a decimal integer", macro, f[2])
		}
		found, v = true, n
	}
	if !found {
		return 0, fmt.Errorf("no #define %s", macro)
	}
	return v, nil
}
