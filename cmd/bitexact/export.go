package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/bitexact/bitexact/conformance/suite"
	"github.com/bitexact/bitexact/golden"
)

const exportHelp = `
Export writes the input vectors of a vendor suite for a kernel harness on
any platform (CUDA, Metal, ROCm, Triton, a CPU library):

  DIR/inputs/<task>.safetensors   the inputs of each task (byte copies of
                                  the golden input files)
  DIR/suite.json                  machine-readable description: op, profile
                                  keys and profiles, per task the input and
                                  output tensors (names, dtypes, shapes,
                                  logical formats), the results file to write
  DIR/README.md                   the same for a human

Run the kernel on each task, write DIR2/<task>.safetensors and
DIR2/results.json, then 'bitexact certify --suite SUITE --results DIR2'.
The formats are documented in docs/vendor.md. --list prints the suites.`

// suiteListHelp lists every suite of the embedded golden set with its
// inputs, outputs and profiles (the table docs/vendor.md also holds).
func suiteListHelp() string {
	set, err := golden.Default()
	if err != nil {
		return ""
	}
	ls, err := suite.List(set)
	if err != nil {
		return ""
	}
	return "\n\nSuites (golden " + set.Manifest.Suite + "):\n\n" + suite.ListText(ls)
}

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("export", "export --suite SUITE --out DIR", exportHelp+suiteListHelp(), stderr)
	name := fs.String("suite", "", "suite to export ("+strings.Join(suite.Names(), ", ")+")")
	out := fs.String("out", "", "output directory")
	dir := fs.String("dir", "", "golden set directory (default: the embedded set)")
	list := fs.Bool("list", false, "list the suites with their tasks and profiles")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "export", "unexpected argument %q", fs.Arg(0))
	}
	set, err := loadSet(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact export: %v\n", err)
		return exitUsage
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "suite\top\ttasks\tprofiles\n")
		for _, sp := range suite.Specs() {
			s, err := sp.Resolve(set)
			if err != nil {
				fmt.Fprintf(tw, "%s\t%s\t-\t(%v)\n", sp.Name, sp.Op, err)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.Name, s.Op, len(s.Tasks), strings.Join(s.Profiles, " "))
		}
		tw.Flush()
		return exitOK
	}
	if *name == "" {
		return usageError(stderr, "export", "--suite is required (suites: %s)", strings.Join(suite.Names(), ", "))
	}
	if *out == "" {
		return usageError(stderr, "export", "--out is required")
	}
	s, err := suite.Resolve(set, *name)
	if err != nil {
		return usageError(stderr, "export", "%v", err)
	}
	d, err := s.Export(set, *out)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact export: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "exported suite %s (golden %s): %d tasks, profiles %s, to %s\n",
		s.Name, s.Version, len(d.Tasks), strings.Join(s.Profiles, ", "), *out)
	return exitOK
}
