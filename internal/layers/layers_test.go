package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/bitexact/bitexact"

// tower is the module's layering, bottom up. A package may import packages
// of its own layer and of the layers below, never one above. Each package
// belongs to the layer of its longest matching pattern ("x/..." matches x
// and everything under it); a package no pattern matches fails the test,
// so a new package is placed deliberately. Internal packages sit at the
// level of their lowest user. A new layer is one more line.
var tower = []struct {
	name     string
	patterns []string
}{
	// The reference: formats and ops, pure Go, no dependency on anything
	// above it. (This package imports nothing of the module.)
	{"refimpl", []string{"refimpl/...", "internal/layers"}},
	// The reference compiled to WebAssembly (the guest, its build) and run
	// under wazero.
	{"wasm", []string{"wasm/..."}},
	// The golden set, its case catalogue, its file codec, and the safe
	// reader and writer every file goes through.
	{"golden", []string{"golden/...", "internal/golden/..."}},
	// Suites, results files, certificates, diagnosis, mutants, records.
	{"conformance", []string{"conformance/...", "internal/conformance/..."}},
	// The gate layer shared by every backend: the claim
	// model and the runners, above the certificate, below the backends.
	{"gate", []string{"gate/..."}},
	// Backends and gates for users' own tests: native kernels, third-party
	// PTX (which launches through backends/cuda), bitexacttest.
	{"backends", []string{"backends/..."}},
	// Commands.
	{"cmd", []string{"cmd/..."}},
}

// layerOf returns the index in tower of path (relative to the module), or
// -1 when no pattern matches.
func layerOf(path string) (int, string) {
	best, bestLen, bestPat := -1, -1, ""
	for i, l := range tower {
		for _, p := range l.patterns {
			base, tree := strings.CutSuffix(p, "/...")
			if path == base || (tree && strings.HasPrefix(path, base+"/")) {
				if len(base) > bestLen {
					best, bestLen, bestPat = i, len(base), p
				}
			}
		}
	}
	return best, bestPat
}

// configs are the build configurations whose files differ in imports.
var configs = []struct {
	name string
	env  []string
	tags string
}{
	{"host", nil, ""},
	{"cuda", nil, "cuda"},
	{"darwin metal", []string{"GOOS=darwin", "GOARCH=arm64"}, "metal"},
	{"wasip1 guest", []string{"GOOS=wasip1", "GOARCH=wasm"}, "bitexact_wasmtest"},
}

type pkg struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

// list runs go list over the module in one configuration.
func list(t *testing.T, env []string, tags string) []pkg {
	t.Helper()
	// The go command that runs the tests sets GOROOT for them; PATH is
	// the fallback.
	gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(gobin); os.Getenv("GOROOT") == "" || err != nil {
		if gobin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to list the module with: %v", err)
		}
	}
	args := []string{"list", "-e", "-json=ImportPath,Imports,Error"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command(gobin, append(args, "./...")...)
	cmd.Dir = filepath.Join("..", "..")
	// CGO_ENABLED=1 so that cgo files (the CUDA and Metal harnesses) are
	// listed with their imports even where the environment turns cgo off;
	// go list compiles nothing, so no C toolchain is needed.
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var ps []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// violations lists, for packages ps, every import of a higher layer and
// every package outside the table, one line each.
func violations(ps []pkg) []string {
	var v []string
	for _, p := range ps {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue // the module root has no package
		}
		li, lp := layerOf(rel)
		if li < 0 {
			v = append(v, rel+": in no layer of the tower (add it to the table in internal/layers)")
			continue
		}
		for _, imp := range p.Imports {
			irel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			ii, ip := layerOf(irel)
			if ii < 0 {
				v = append(v, rel+" imports "+irel+", which is in no layer of the tower")
				continue
			}
			if ii > li {
				v = append(v, rel+" (layer "+tower[li].name+", "+lp+") imports "+irel+" (layer "+tower[ii].name+", "+ip+"), a layer above it")
			}
		}
	}
	sort.Strings(v)
	return v
}

func TestTower(t *testing.T) {
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			ps := list(t, c.env, c.tags)
			if len(ps) < 10 {
				t.Fatalf("go list found %d packages: not the module", len(ps))
			}
			for _, p := range ps {
				if p.Error != nil && !strings.Contains(p.Error.Err, "build constraints exclude all Go files") {
					t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
				}
			}
			for _, line := range violations(ps) {
				t.Error(line)
			}
		})
	}
}

// The check itself catches an import upward, a package outside the
// table, and lets imports sideways and downward pass.
func TestViolations(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	for _, tc := range []struct {
		name string
		p    pkg
		want []string
	}{
		{"down", pkg{ImportPath: m("golden"), Imports: []string{m("wasm"), m("refimpl/ops"), "fmt"}}, nil},
		{"sideways", pkg{ImportPath: m("refimpl/nvfp4"), Imports: []string{m("refimpl/fp4")}}, nil},
		{"internal at its user's level", pkg{ImportPath: m("golden"), Imports: []string{m("internal/golden/catalog")}}, nil},
		{"up", pkg{ImportPath: m("refimpl/ops"), Imports: []string{m("golden")}},
			[]string{"refimpl/ops (layer refimpl, refimpl/...) imports golden (layer golden, golden/...), a layer above it"}},
		{"a backend imported from below", pkg{ImportPath: m("conformance/suite"), Imports: []string{m("backends/ptxabi")}},
			[]string{"conformance/suite (layer conformance, conformance/...) imports backends/ptxabi (layer backends, backends/...), a layer above it"}},
		{"internal packages by layer", pkg{ImportPath: m("internal/golden/catalog"), Imports: []string{m("internal/conformance/record")}},
			[]string{"internal/golden/catalog (layer golden, internal/golden/...) imports internal/conformance/record (layer conformance, internal/conformance/...), a layer above it"}},
		{"gate below backends", pkg{ImportPath: m("gate"), Imports: []string{m("backends/cuda")}},
			[]string{"gate (layer gate, gate/...) imports backends/cuda (layer backends, backends/...), a layer above it"}},
		{"unplaced", pkg{ImportPath: m("newpkg")}, []string{"newpkg: in no layer of the tower (add it to the table in internal/layers)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := violations([]pkg{tc.p})
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("violations = %q, want %q", got, tc.want)
			}
		})
	}
}
