package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/internal/golden/catalog"
)

const goldenHelp = `
Golden manages the versioned golden vector set: safetensors files of inputs
(generated on the host from fixed seeds with an integer PRNG) and expected
outputs (computed by the reference), plus manifest.json with the suite
version, the generator module's SHA-256 and the SHA-256 of every file.

Subcommands:
  gen     regenerate the set into a directory (default golden/data)
  verify  regenerate the set in memory and require byte identity with a
          directory (default: the embedded set)

Run 'bitexact golden gen -h' or 'bitexact golden verify -h' for flags.`

func runGolden(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: bitexact golden gen|verify [flags]\n%s\n", goldenHelp)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stderr, "Usage: bitexact golden gen|verify [flags]\n%s\n", goldenHelp)
		return exitOK
	case "gen":
		return runGoldenGen(ctx, args[1:], stdout, stderr)
	case "verify":
		return runGoldenVerify(ctx, args[1:], stdout, stderr)
	}
	return usageError(stderr, "golden", "unknown subcommand %q (gen, verify)", args[0])
}

func runGoldenGen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("golden gen", "golden gen [--out DIR] [--engine wasm|native]", `
Gen regenerates the golden set: inputs from their seeds, expected outputs
through the engine (wasm by default: the committed set is always generated
through WebAssembly). Stale .safetensors files in DIR/inputs and
DIR/expected are removed. Regenerating twice gives identical bytes.`, stderr)
	out := fs.String("out", "golden/data", "output directory")
	engine := fs.String("engine", "wasm", "engine computing expected outputs: wasm or native")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "golden gen", "unexpected argument %q", fs.Arg(0))
	}
	es, closeEngines, err := openEngines(ctx, *engine)
	if err != nil {
		return usageError(stderr, "golden gen", "%v", err)
	}
	defer closeEngines()
	if len(es) != 1 {
		return usageError(stderr, "golden gen", "name one engine")
	}
	p := newProgress(stderr, "golden gen")
	p.unit = "files"
	t0 := time.Now()
	f, err := golden.Build(ctx, es[0].Engine, &golden.Options{
		Progress: func(done, total int, file string) { p.update(float64(done), float64(total), file) },
	})
	p.done()
	if err != nil {
		fmt.Fprintf(stderr, "bitexact golden gen: %v\n", err)
		return exitUsage
	}
	el := time.Since(t0)
	if err := f.WriteDir(*out); err != nil {
		fmt.Fprintf(stderr, "bitexact golden gen: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "wrote %s: %d input sets, %d cases, %d files, %d bytes (%.2f MiB); generated in %s by %s\n",
		*out, len(f.Manifest.Inputs), len(f.Manifest.Cases), len(f.Data), f.Size(), float64(f.Size())/(1<<20),
		el.Round(time.Millisecond), f.Manifest.Generator)
	if s := catalog.Skipped(); len(s) > 0 {
		fmt.Fprintf(stdout, "note: %d catalog cases skipped because their op is not registered (first: %s, op %s)\n", len(s), s[0].Name, s[0].Op)
	}
	return exitOK
}

func runGoldenVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("golden verify", "golden verify [--dir DIR] [--engine wasm|native]", `
Verify regenerates the golden set in memory and requires byte identity with
the set in DIR (default: the embedded set): same files, same bytes. The
first difference is named by file, tensor and element. Exit status 1 on a
difference.`, stderr)
	dir := fs.String("dir", "", "golden set directory (default: the embedded set)")
	engine := fs.String("engine", "wasm", "engine computing expected outputs: wasm or native")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "golden verify", "unexpected argument %q", fs.Arg(0))
	}
	fsys := golden.DataFS()
	where := "the embedded set"
	if *dir != "" {
		d, err := openDir(*dir)
		if err != nil {
			return usageError(stderr, "golden verify", "%v", err)
		}
		fsys, where = d, *dir
	}
	es, closeEngines, err := openEngines(ctx, *engine)
	if err != nil {
		return usageError(stderr, "golden verify", "%v", err)
	}
	defer closeEngines()
	if len(es) != 1 {
		return usageError(stderr, "golden verify", "name one engine")
	}
	p := newProgress(stderr, "golden verify")
	p.unit = "files"
	t0 := time.Now()
	err = golden.Verify(ctx, es[0].Engine, fsys, &golden.Options{
		Progress: func(done, total int, file string) { p.update(float64(done), float64(total), file) },
	})
	p.done()
	var d *golden.DiffError
	switch {
	case errors.As(err, &d):
		fmt.Fprintf(stdout, "MISMATCH in %s: %v\n", where, d)
		return exitMismatch
	case err != nil:
		fmt.Fprintf(stderr, "bitexact golden verify: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "verified %s: byte-identical to a regeneration through %s (%s)\n", where, es[0].name, time.Since(t0).Round(time.Millisecond))
	return exitOK
}
