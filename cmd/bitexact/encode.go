package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bitexact/bitexact/refimpl/unary"
)

const encodeHelp = `
Encode shows, for each VALUE, its code under every profile of every format
(FP4 E2M1, FP8 E4M3/E5M2, E8M0, BF16, FP16) with the code's bit fields
(sign, exponent, mantissa) and decoded value. A '*' marks a profile whose
code differs from the first (canonical) profile of the same format.

VALUE is a decimal or hex float ("0.75", "-1e-3", "0x1.8p-1"), "inf",
"-inf", "nan", "-nan", or a float32 bit pattern as "bits:0x7fc00001".
Negative values are values, not flags: bitexact encode -1 -inf -1e-3.

With --block nvfp4|mxfp4 the values form one block (16 for nvfp4, 32 for
mxfp4; missing values are zero) and are quantized by the reference op:
encode prints the scale, every element's code, its dequantized value and
the error. --profile picks the op's recipe (nvfp4) or profile (mxfp4) and
needs --block.`

func runEncode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("encode", "encode [--format F] [--block nvfp4|mxfp4 [--profile P]] VALUE...", encodeHelp, stderr)
	format := fs.String("format", "", "only this format ("+strings.Join(formatNames(), ", ")+")")
	block := fs.String("block", "", "quantize the values as one block: nvfp4 or mxfp4")
	profile := fs.String("profile", "", "with --block: the profile parameter of the quantize op (default: the op's default)")
	if st, ok := parse(fs, valuesLast(fs, args)); !ok {
		return st
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "encode", "no VALUE given")
	}
	if *profile != "" && *block == "" {
		return usageError(stderr, "encode", "--profile %q needs --block nvfp4|mxfp4 (without --block every profile of every format is shown; --format picks a format)", *profile)
	}
	vals := make([]float32, fs.NArg())
	for i, a := range fs.Args() {
		v, err := parseValue(a)
		if err != nil {
			return usageError(stderr, "encode", "argument %d: %v", i+1, err)
		}
		vals[i] = v
	}
	if *block != "" {
		return encodeBlock(ctx, *block, *profile, vals, stdout, stderr)
	}
	convs := unary.All()
	if *format != "" {
		var keep []unary.Conversion
		for _, c := range convs {
			if c.Format == *format {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return usageError(stderr, "encode", "unknown format %q", *format)
		}
		convs = keep
	}
	for i, v := range vals {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		b := math.Float32bits(v)
		fmt.Fprintf(stdout, "x = %s  (float32 bits 0x%08x)\n", fmtValue(v), b)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "conversion\tcode\tbits\ts\texp\tmant\tdecoded\t\n")
		canon := map[string]uint32{}
		for _, c := range convs {
			code := c.Encode(v)
			mark := ""
			if first, ok := canon[c.Format]; !ok {
				canon[c.Format] = code
			} else if first != code {
				mark = "*"
			}
			s, e, m := c.Fields.Binary(code)
			fmt.Fprintf(tw, "%s\t0x%0*x\t%0*b\t%s\t%s\t%s\t%s\t%s\n", c.Name, (c.Bits+3)/4, code, c.Bits, code, s, e, m, fmtValue(c.Decode(code)), mark)
		}
		tw.Flush()
	}
	return exitOK
}

// valuesLast reorders args so that the flag package, which stops at the
// first argument that is not a flag and reads "-1" as a flag, sees the
// flags first and every VALUE after "--": an argument that starts with '-'
// and parses as a VALUE ("-1", "-inf", "-1e-3", "-nan") is a value unless
// it follows a flag that takes one. Arguments after "--" stay values.
func valuesLast(fs *flag.FlagSet, args []string) []string {
	var flags, values []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			values = append(values, args[i+1:]...)
			i = len(args)
		case !strings.HasPrefix(a, "-") || a == "-":
			values = append(values, a)
		default:
			if _, err := parseValue(a); err == nil {
				values = append(values, a)
				continue
			}
			flags = append(flags, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			f := fs.Lookup(name)
			if f == nil || hasValue || i+1 == len(args) {
				continue // the flag package reports an unknown flag
			}
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				i++
				flags = append(flags, args[i]) // the flag's value, whatever it looks like
			}
		}
	}
	return append(append(flags, "--"), values...)
}

// parseValue reads one VALUE argument.
func parseValue(a string) (float32, error) {
	s := strings.ToLower(strings.TrimSpace(a))
	if h, ok := strings.CutPrefix(s, "bits:"); ok {
		u, err := strconv.ParseUint(strings.TrimPrefix(h, "0x"), 16, 32)
		if err != nil {
			return 0, fmt.Errorf("%q is not a 32-bit hex pattern", a)
		}
		return math.Float32frombits(uint32(u)), nil
	}
	switch s {
	case "nan", "+nan":
		return math.Float32frombits(0x7fc00000), nil
	case "-nan":
		return math.Float32frombits(0xffc00000), nil
	}
	v, err := strconv.ParseFloat(s, 32)
	if err != nil {
		var ne *strconv.NumError
		if ok := asNumError(err, &ne); ok && ne.Err == strconv.ErrRange {
			return float32(v), nil // ±Inf or ±0 after rounding, as float32 conversion gives
		}
		return 0, fmt.Errorf("%q is not a number", a)
	}
	return float32(v), nil
}

func asNumError(err error, ne **strconv.NumError) bool {
	e, ok := err.(*strconv.NumError)
	if ok {
		*ne = e
	}
	return ok
}

// fmtValue prints a float32 exactly (shortest round-trip form), keeping
// the sign of zero and NaN.
func fmtValue(v float32) string { return unary.FormatValue(v) }

// formatNames lists the code formats of the reference, in unary's order.
func formatNames() []string {
	var n []string
	for _, f := range unary.Formats() {
		n = append(n, f.Name)
	}
	return n
}
