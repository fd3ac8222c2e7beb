// Command bitexact tells a kernel author, bit for bit, whether a
// low-precision kernel computes exactly what it should.
//
// Usage:
//
//	bitexact <command> [flags] [arguments]
//
// Commands:
//
//	certify     run the reference (native and wasm) against the golden set
//	golden      generate or verify the golden set (gen, verify)
//	exhaustive  recompute 2^32-input Merkle digests of unary conversions
//	encode      show a value's code under every profile of every format
//	semantics   write the disagreement matrix (docs/semantics.md)
//	export      export a vendor suite's inputs for a kernel harness
//	verify-cert re-check a certificate
//	keygen      make an ed25519 key pair for signing certificates
//	record      record a real implementation's outputs against the profiles
//	ecosystem   write docs/ecosystem.md from the records
//
// Exit status: 0 success or full conformance, 1 a mismatch, 2 bad usage or
// bad input.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// Exit statuses.
const (
	exitOK       = 0
	exitMismatch = 1
	exitUsage    = 2
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"certify", "run the reference natively and through wasm against the golden set", runCertify},
		{"golden", "generate (gen) or verify (verify) the golden vector set", runGolden},
		{"exhaustive", "recompute and check the 2^32-input digests of unary conversions", runExhaustive},
		{"encode", "show codes of values under every profile, or block-quantize them", runEncode},
		{"semantics", "write the disagreement matrix of every format's profiles", runSemantics},
		{"export", "export a vendor suite's inputs and description for a kernel harness", runExport},
		{"verify-cert", "re-check a certificate against the golden set and its results", runVerifyCert},
		{"keygen", "make an ed25519 key pair for signing certificates", runKeygen},
		{"record", "record a real implementation's outputs against the profiles", runRecord},
		{"ecosystem", "write the conformance matrix of the recorded implementations", runEcosystem},
		{"serve", "serve the browser demo (the reference wasm module in a web page)", runServe},
		{"site", "write the browser demo as static files for any static host", runSite},
	}
}

func main() {
	// The first Ctrl-C cancels ctx (the wasm engines close, and the
	// command stops within a guest call); it also restores the default
	// handling, so a second Ctrl-C ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "bitexact: bit-exact conformance for low-precision kernels\n\nUsage:\n  bitexact <command> [flags] [arguments]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'bitexact <command> -h' for a command's flags.\n"+
		"Exit status: 0 success or conformance, 1 mismatch, 2 bad usage or bad input.\n")
}

// run is main without the process: it parses args, writes to stdout and
// stderr, and returns the exit status (tests call it in-process).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	fmt.Fprintf(stderr, "bitexact: unknown command %q (commands: %s)\n", args[0], strings.Join(names, ", "))
	return exitUsage
}

// newFlags makes a FlagSet whose -h prints the command's help text.
func newFlags(name, synopsis, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: bitexact %s\n\n%s\n", synopsis, strings.TrimSpace(help))
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintf(stderr, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses flags; it returns (status, false) when the command must stop:
// exitOK after -h, exitUsage on a bad flag.
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}

// usageError prints a usage problem and returns exitUsage.
func usageError(stderr io.Writer, cmd, format string, a ...any) int {
	fmt.Fprintf(stderr, "bitexact %s: %s\n", cmd, fmt.Sprintf(format, a...))
	fmt.Fprintf(stderr, "Run 'bitexact %s -h' for usage.\n", cmd)
	return exitUsage
}
