// Package guestbuild builds the wasm guest (wasm/guest) with the one set of
// flags that makes the output a function of the source and the Go
// toolchain version only. `go generate ./wasm`, `make wasm` and the
// up-to-date test all go through Build, so they cannot drift apart.
package guestbuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Package is the guest's import path.
const Package = "github.com/bitexact/bitexact/wasm/guest"

// Env is the environment that Build overrides. Everything that can change
// code generation or stamped metadata is pinned: the target, cgo, the wasm
// feature set (GOWASM), experiments, and GOFLAGS (which could otherwise
// carry -tags, -mod=vendor or -buildvcs from the caller's environment).
var Env = []string{
	"GOOS=wasip1",
	"GOARCH=wasm",
	"CGO_ENABLED=0",
	"GOWASM=",
	"GOEXPERIMENT=",
	"GOFLAGS=",
}

// Args are the `go build` arguments before -o: a reactor (c-shared, so
// the host calls _initialize and then the exports), no file paths
// (-trimpath), no VCS stamp (it would change with every commit and with
// a dirty tree), and no symbol table, DWARF or build ID.
var Args = []string{
	"build",
	"-buildmode=c-shared",
	"-trimpath",
	"-buildvcs=false",
	"-ldflags=-s -w -buildid=",
}

// Build compiles the guest into out with the go command goCmd ("" means
// "go" from PATH). Extra build tags (the tests' bitexact_wasmtest) go in
// tags. Build runs in dir, which must lie inside the bitexact module.
func Build(ctx context.Context, goCmd, dir, out string, tags ...string) error {
	if goCmd == "" {
		goCmd = "go"
	}
	args := append([]string(nil), Args...)
	if len(tags) > 0 {
		args = append(args, "-tags="+strings.Join(tags, ","))
	}
	args = append(args, "-o", out, Package)
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Env...)
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the wasm guest (%s %s): %v\n%s", goCmd, strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// GoVersion reports the toolchain version of goCmd ("" means "go" from
// PATH), e.g. "go1.26.8".
func GoVersion(ctx context.Context, goCmd string) (string, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("%s env GOVERSION: %v", goCmd, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// ModuleGoVersion extracts the Go toolchain version from the "producers"
// custom section of a module built by the Go linker (language Go, version
// e.g. "go1.26.8"), or "" when the module has none.
func ModuleGoVersion(wasm []byte) string {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return ""
	}
	b := wasm[8:]
	for len(b) > 0 {
		id := b[0]
		size, k := uleb(b[1:])
		if k <= 0 || uint64(len(b)-1-k) < size {
			return ""
		}
		sec := b[1+k : 1+k+int(size)]
		b = b[1+k+int(size):]
		if id != 0 {
			continue
		}
		name, sec, ok := str(sec)
		if !ok || name != "producers" {
			continue
		}
		fields, k := uleb(sec)
		if k <= 0 {
			return ""
		}
		sec = sec[k:]
		for ; fields > 0; fields-- {
			field, rest, ok := str(sec)
			if !ok {
				return ""
			}
			n, k := uleb(rest)
			if k <= 0 {
				return ""
			}
			sec = rest[k:]
			for ; n > 0; n-- {
				var lang, ver string
				if lang, sec, ok = str(sec); !ok {
					return ""
				}
				if ver, sec, ok = str(sec); !ok {
					return ""
				}
				if field == "language" && lang == "Go" {
					return ver
				}
			}
		}
	}
	return ""
}

// str reads a uleb-length-prefixed string.
func str(b []byte) (string, []byte, bool) {
	n, k := uleb(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

func uleb(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
