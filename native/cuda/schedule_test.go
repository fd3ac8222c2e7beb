package cuda

import (
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
