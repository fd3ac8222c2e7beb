package ptxabi_test

import (
	"fmt"

	"github.com/bitexact/bitexact/backends/ptxabi"
)

func ExampleLookup() {
	a, err := ptxabi.Lookup("unary-e4m3")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Suite, a.DefaultClaim, a.Conversion(a.DefaultClaim))
	fmt.Println(a.Signature)
	// Output:
	// e4m3 satfinite e4m3/satfinite
	// extern "C" __global__ void NAME(const float *x, unsigned char *out, unsigned long long n)
}
