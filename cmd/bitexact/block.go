package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/half"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// encodeBlock quantizes vals as one row with the nvfp4 or mxfp4 reference
// op, padded with zeros to whole blocks, and prints scales, codes,
// dequantized values and errors.
func encodeBlock(ctx context.Context, kind, profile string, vals []float32, stdout, stderr io.Writer) int {
	var bs int
	var qop, dqop, param string
	switch kind {
	case "nvfp4":
		bs, qop, dqop, param = 16, "nvfp4.quantize", "nvfp4.dequantize", "recipe"
	case "mxfp4":
		bs, qop, dqop, param = 32, "mxfp4.quantize", "mxfp4.dequantize", "profile"
	default:
		for _, f := range block.Formats() {
			if (kind == f.Name || kind == f.Suite) && f.Quantize != nil {
				return encodeDescribedBlock(ctx, f, profile, vals, stdout, stderr)
			}
		}
		return usageError(stderr, "encode", "--block %q: want nvfp4, mxfp4 or a block format of refimpl/block that quantizes (%s)", kind, strings.Join(quantizingBlocks(), ", "))
	}
	k := (len(vals) + bs - 1) / bs * bs
	x := make([]float32, k)
	copy(x, vals)
	p := ops.Params{}
	if profile != "" {
		p[param] = profile
	}
	e := golden.Native{}
	q, err := e.Run(ctx, qop, p, ops.Tensors{"x": tensor.FromF32([]int{1, k}, x)})
	if err != nil {
		fmt.Fprintf(stderr, "bitexact encode: %v\n", err)
		return exitUsage
	}
	dp := ops.Params{}
	if kind == "nvfp4" && profile != "" {
		dp["recipe"] = profile
	}
	dq, err := e.Run(ctx, dqop, dp, q)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact encode: %v\n", err)
		return exitUsage
	}
	y := dq["y"].F32()
	shown := profile
	if shown == "" {
		op, _ := ops.Lookup(qop)
		shown, _ = op.Default(param)
	}
	codes := q["packed"].Data
	scales := q["scales"].Data
	if kind == "nvfp4" {
		g := q["global"].F32()[0]
		fmt.Fprintf(stdout, "nvfp4 (%s %s): %s in %s of 16; per-tensor scale %s (float32 0x%08x)\n",
			param, shown, plural(len(vals), "value"), plural(k/bs, "block"), fmtValue(g), math.Float32bits(g))
	} else {
		fmt.Fprintf(stdout, "mxfp4 (%s %s): %s in %s of 32\n", param, shown, plural(len(vals), "value"), plural(k/bs, "block"))
	}
	for b := 0; b < k/bs; b++ {
		s := scales[b]
		if kind == "nvfp4" {
			fmt.Fprintf(stdout, "\nblock %d: scale 0x%02x (E4M3 %s)\n", b, s, fmtValue(fp8.E4M3.Decode(s)))
		} else {
			fmt.Fprintf(stdout, "\nblock %d: scale 0x%02x (E8M0 %s)\n", b, s, fmtValue(e8m0.Decode(s)))
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "i\tx\tcode\te2m1\tdequantized\terror\n")
		for i := b * bs; i < (b+1)*bs; i++ {
			c := codes[i/2] >> (4 * (i & 1)) & 0xF
			errStr := "-"
			if !math.IsNaN(float64(y[i])) && !math.IsNaN(float64(x[i])) && !math.IsInf(float64(x[i]), 0) {
				errStr = fmtFloat64(float64(y[i]) - float64(x[i])) // exact: both are float32
			}
			if i >= len(vals) {
				break
			}
			fmt.Fprintf(tw, "%d\t%s\t0x%x\t%s\t%s\t%s\n", i, fmtValue(x[i]), c, fmtValue(fp4.Decode(c)), fmtValue(y[i]), errStr)
		}
		tw.Flush()
		if n := (b+1)*bs - max(len(vals), b*bs); n > 0 {
			fmt.Fprintf(stdout, "(%d zero elements pad the block)\n", n)
		}
	}
	return exitOK
}

// plural is "1 block", "2 blocks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func fmtFloat64(v float64) string { return fmt.Sprintf("%.9g", v) }

// quantizingBlocks lists refimpl/block's formats that have a quantizer,
// by suite stem (which, unlike ggml's name nvfp4, no other block kind
// shares).
func quantizingBlocks() []string {
	var n []string
	for _, f := range block.Formats() {
		if f.Quantize != nil {
			n = append(n, f.Suite)
		}
	}
	return n
}

// encodeDescribedBlock quantizes vals with a block format of
// refimpl/block (padded with zeros to whole blocks), then prints each
// block's fields as its layout declares them and the dequantized values.
func encodeDescribedBlock(ctx context.Context, f block.Format, profile string, vals []float32, stdout, stderr io.Writer) int {
	if profile == "" {
		profile = f.Profiles[0].Name
	}
	k := (len(vals) + f.BlockElems - 1) / f.BlockElems * f.BlockElems
	x := make([]float32, k)
	copy(x, vals)
	e := golden.Native{}
	q, err := e.Run(ctx, f.Quantize.Op, block.Params(f.Quantize.Params, f.ProfileParam, profile), ops.Tensors{"x": tensor.FromF32([]int{k}, x)})
	if err != nil {
		fmt.Fprintf(stderr, "bitexact encode: %v\n", err)
		return exitUsage
	}
	dq, err := e.Run(ctx, f.Dequantize.Op, block.Params(f.Dequantize.Params, f.ProfileParam, profile), q)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact encode: %v\n", err)
		return exitUsage
	}
	b, y := q["blocks"].Data, dq["y"].F32()
	fmt.Fprintf(stdout, "%s (%s %s): %s in %s of %d (%d bytes each)\n", f.Title, f.ProfileParam, profile,
		plural(len(vals), "value"), plural(k/f.BlockElems, "block"), f.BlockElems, f.BlockBytes)
	for i := 0; i < k/f.BlockElems; i++ {
		blk := b[i*f.BlockBytes : (i+1)*f.BlockBytes]
		fmt.Fprintf(stdout, "\nblock %d:\n", i)
		for _, l := range f.Layout {
			fb := blk[l.Offset : l.Offset+l.Bytes]
			val := fmt.Sprintf("% x", fb)
			switch l.Kind {
			case "fp16":
				v := half.DecodeFP16(uint16(fb[0]) | uint16(fb[1])<<8)
				val = fmt.Sprintf("0x%02x%02x = %s", fb[1], fb[0], fmtValue(v))
			case "f32":
				bits := uint32(fb[0]) | uint32(fb[1])<<8 | uint32(fb[2])<<16 | uint32(fb[3])<<24
				val = fmt.Sprintf("0x%08x = %s", bits, fmtValue(math.Float32frombits(bits)))
			}
			fmt.Fprintf(stdout, "  %-8s %s (%s): %s\n", l.Name, l.Kind, l.Doc, val)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "i\tx\tdequantized\n")
		for j := i * f.BlockElems; j < (i+1)*f.BlockElems && j < len(vals); j++ {
			fmt.Fprintf(tw, "%d\t%s\t%s\n", j, fmtValue(x[j]), fmtValue(y[j]))
		}
		tw.Flush()
	}
	return exitOK
}
