package diagnose

import (
	"fmt"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Alternatives of the MXFP4 quantizers: OCP MX scale modes x E2M1
// profiles, and llama.cpp block_mxfp4 packed as adjacent pairs.

// MXFP4: every named mode x E2M1 profile through the registered op.
func mxfp4Alternatives() []Alternative {
	var alts []Alternative
	for _, mode := range []string{"floor", "ceil", "even", "rceil"} {
		for _, p := range []string{"nvidia", "sw-sm121", "ml_dtypes", "ties-away", "ties-toward-zero", "ggml"} {
			mode, p := mode, p
			alts = append(alts, Alternative{Class: fmt.Sprintf("mxfp4:mode=%s,profile=%s", mode, p),
				Doc: fmt.Sprintf("E8M0 scale mode %s with E2M1 elements as profile %s", mode, p),
				Compute: func(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
					out, err := ops.Run(s.Op, withParams(ops.Params(t.Task.Params), map[string]string{"mode": mode, "profile": p}), t.Inputs)
					if err != nil {
						return nil, false, nil
					}
					return out, true, nil
				}})
		}
	}
	return alts
}

// ggmlAdjacent repacks block_mxfp4 qs from split halves to adjacent pairs.
func ggmlAdjacent(s *suite.Suite, t Task) (ops.Tensors, bool, error) {
	b, ok := t.Reference["blocks"]
	if !ok || len(b.Data)%17 != 0 {
		return nil, false, nil
	}
	d := append([]byte{}, b.Data...)
	for off := 0; off < len(d); off += 17 {
		var q [32]uint8
		for j := 0; j < 16; j++ {
			q[j] = b.Data[off+1+j] & 15
			q[j+16] = b.Data[off+1+j] >> 4
		}
		for j := 0; j < 16; j++ {
			d[off+1+j] = q[2*j] | q[2*j+1]<<4
		}
	}
	return ops.Tensors{"blocks": {DType: b.DType, Shape: b.Shape, Logical: b.Logical, Data: d}}, true, nil
}
