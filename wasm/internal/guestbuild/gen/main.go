// Command gen builds the wasm guest into a file: `go generate ./wasm` runs
// it as `go run ./internal/guestbuild/gen -o refimpl.wasm`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bitexact/bitexact/wasm/internal/guestbuild"
)

func main() {
	out := flag.String("o", "refimpl.wasm", "output file")
	goCmd := flag.String("go", "go", "go command to build with")
	flag.Parse()
	if err := run(*goCmd, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run builds into a temporary file next to out and renames it, so that an
// interrupted build never leaves a truncated module behind.
func run(goCmd, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), ".refimpl-*.wasm")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := guestbuild.Build(context.Background(), goCmd, wd, tmp.Name()); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), abs)
}
