package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/refimpl/unary"
)

const exhaustiveHelp = `
Exhaustive recomputes a unary conversion over all 2^32 float32 inputs and
checks the Merkle digest of its outputs (256 chunks of 2^24 inputs, SHA-256)
against the committed one. A mismatch is localised to its chunks from the
leaves, then to the first differing input by recomputing that chunk with
the other engine (native against wasm).

Name the conversion as --conv FORMAT/PROFILE, or --op FORMAT --profile P,
or use --all. --write DIR stores the computed digests instead of checking
them (this is how golden/exhaustive/digests is produced).`

func runExhaustive(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("exhaustive", "exhaustive (--conv F/P | --op F --profile P | --all) [flags]", exhaustiveHelp, stderr)
	conv := fs.String("conv", "", "conversion as format/profile, e.g. e2m1/nvidia")
	op := fs.String("op", "", "format, e.g. e2m1, e4m3, e8m0 (with --profile)")
	profile := fs.String("profile", "", "profile of the format named by --op")
	all := fs.Bool("all", false, "every conversion of every format")
	engine := fs.String("engine", "wasm", "engine: wasm or native")
	workers := fs.Int("workers", 0, "chunks computed at once (default GOMAXPROCS)")
	write := fs.String("write", "", "write digests into this directory instead of checking")
	digests := fs.String("digests", "", "directory of digest files to check against (default: the committed ones)")
	chunksFlag := fs.String("chunks", "", "check only these chunks (comma-separated indices 0..255) against the committed leaves: a sampled check, not a full one")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "exhaustive", "unexpected argument %q", fs.Arg(0))
	}
	var names []string
	switch {
	case *all && (*conv != "" || *op != ""):
		return usageError(stderr, "exhaustive", "--all excludes --conv and --op")
	case *all:
		for _, c := range unary.All() {
			names = append(names, c.Name)
		}
	case *conv != "" && *op != "":
		return usageError(stderr, "exhaustive", "give --conv or --op/--profile, not both")
	case *conv != "":
		names = []string{*conv}
	case *op != "" && *profile != "":
		names = []string{*op + "/" + *profile}
	case *op != "":
		for _, c := range unary.All() {
			if c.Format == *op {
				names = append(names, c.Name)
			}
		}
		if len(names) == 0 {
			return usageError(stderr, "exhaustive", "unknown format %q", *op)
		}
	default:
		return usageError(stderr, "exhaustive", "name a conversion (--conv, --op/--profile) or --all")
	}
	for _, n := range names {
		if _, err := unary.Lookup(n); err != nil {
			return usageError(stderr, "exhaustive", "%v", err)
		}
	}
	es, closeEngines, err := openEngines(ctx, *engine)
	if err != nil {
		return usageError(stderr, "exhaustive", "%v", err)
	}
	defer closeEngines()
	if len(es) != 1 {
		return usageError(stderr, "exhaustive", "name one engine")
	}
	e := es[0]
	committed := exhaustive.Committed
	if *digests != "" {
		dir := *digests
		committed = func(conv string) (*exhaustive.Digest, error) {
			fsys, err := openDir(dir)
			if err != nil {
				return nil, err
			}
			return exhaustive.Read(fsys, exhaustive.FileName(conv), conv)
		}
	}
	if *chunksFlag != "" {
		if *write != "" {
			return usageError(stderr, "exhaustive", "--chunks excludes --write")
		}
		var chunks []int
		for _, f := range strings.Split(*chunksFlag, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || k < 0 || k >= exhaustive.Leaves {
				return usageError(stderr, "exhaustive", "--chunks: %q is not a chunk index in 0..%d", f, exhaustive.Leaves-1)
			}
			chunks = append(chunks, k)
		}
		return sampledExhaustive(ctx, e, committed, names, chunks, *workers, stdout, stderr)
	}
	status := exitOK
	for _, n := range names {
		var want *exhaustive.Digest
		if *write == "" {
			if want, err = committed(n); err != nil {
				fmt.Fprintf(stderr, "bitexact exhaustive: %v\n", err)
				return exitUsage
			}
		}
		p := newProgress(stderr, n)
		p.unit = "inputs"
		t0 := time.Now()
		got, err := exhaustive.Compute(ctx, e.Engine, n, *workers, func(done, total uint64) {
			p.update(float64(done), float64(total), "")
		})
		p.done()
		if err != nil {
			fmt.Fprintf(stderr, "bitexact exhaustive: %v\n", err)
			return exitUsage
		}
		el := time.Since(t0).Round(time.Millisecond)
		if *write != "" {
			b, err := got.Marshal()
			if err == nil {
				err = safeio.WriteFile(filepath.Join(*write, exhaustive.FileName(n)), b, 0o644)
			}
			if err != nil {
				fmt.Fprintf(stderr, "bitexact exhaustive: %v\n", err)
				return exitUsage
			}
			fmt.Fprintf(stdout, "%-22s root %s  (%s, %s)\n", n, got.Root, e.name, el)
			continue
		}
		err = exhaustive.Compare(want, got)
		var m *exhaustive.Mismatch
		switch {
		case err == nil:
			fmt.Fprintf(stdout, "ok   %-22s root %s  (%s, %s)\n", n, got.Root, e.name, el)
		case errors.As(err, &m):
			status = exitMismatch
			fmt.Fprintf(stdout, "FAIL %-22s %v\n", n, m)
			fmt.Fprintf(stdout, "     %s\n", localize(ctx, e, n, m.Chunks[0]))
		default:
			fmt.Fprintf(stderr, "bitexact exhaustive: %v\n", err)
			return exitUsage
		}
	}
	return status
}

// sampledExhaustive checks a few chunks of each conversion against the
// committed leaves.
func sampledExhaustive(ctx context.Context, e namedEngine, committed func(string) (*exhaustive.Digest, error), names []string, chunks []int, workers int, stdout, stderr io.Writer) int {
	status := exitOK
	for _, n := range names {
		want, err := committed(n)
		if err != nil {
			fmt.Fprintf(stderr, "bitexact exhaustive: %v\n", err)
			return exitUsage
		}
		t0 := time.Now()
		got, err := exhaustive.ComputeLeaves(ctx, e.Engine, n, chunks, workers)
		if err != nil {
			fmt.Fprintf(stderr, "bitexact exhaustive: %v\n", err)
			return exitUsage
		}
		bad := -1
		for i, k := range chunks {
			if got[i] != want.Leaves[k] {
				bad = k
				break
			}
		}
		el := time.Since(t0).Round(time.Millisecond)
		if bad < 0 {
			fmt.Fprintf(stdout, "ok   %-22s %d of %d chunks match the committed leaves (SAMPLED, not a full check; %s, %s)\n", n, len(chunks), exhaustive.Leaves, e.name, el)
			continue
		}
		status = exitMismatch
		fmt.Fprintf(stdout, "FAIL %-22s chunk %d differs from the committed leaf\n     %s\n", n, bad, localize(ctx, e, n, bad))
	}
	return status
}

// localize finds the first input of a differing chunk where this engine
// disagrees with the other one.
func localize(ctx context.Context, e namedEngine, conv string, chunk int) string {
	var other golden.Engine = golden.Native{}
	otherName := "native"
	if e.name == "native" {
		w, closeW, err := openEngines(ctx, "wasm")
		if err != nil {
			return "cannot localise: " + err.Error()
		}
		defer closeW()
		other, otherName = w[0].Engine, "wasm"
	}
	d, err := exhaustive.Localize(ctx, other, e.Engine, conv, chunk)
	switch {
	case err != nil:
		return "cannot localise: " + err.Error()
	case d == nil:
		return fmt.Sprintf("%s and %s agree on chunk %d: the reference itself differs from the committed digest (regenerate the digests if the change is intended)", otherName, e.name, chunk)
	}
	c, _ := unary.Lookup(conv)
	return fmt.Sprintf("%v [%s reference decodes 0x%x as %g; %s output 0x%x decodes as %g]", d, otherName, d.Want, c.Decode(d.Want), e.name, d.Got, c.Decode(d.Got))
}
