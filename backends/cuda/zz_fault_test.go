//go:build cuda

package cuda

import (
	"context"
	"errors"
	"testing"
)

// TestZZFaultNamesKernel: an illegal address inside a kernel is an error
// naming the kernel. It runs last (its file sorts last, and Go runs tests in file order) on its own Device because a
// fault poisons the context.
func TestZZFaultNamesKernel(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	err = d.Launch(context.Background(), "util_fault", Dims{1, 1, 1}, Dims{32, 1, 1}, 0, uint64(8))
	var ke *KernelError
	if !errors.As(err, &ke) || ke.Kernel != "util_fault" {
		t.Fatalf("write to address 8: err = %v, want a KernelError naming util_fault", err)
	}
	t.Log(err)
}
