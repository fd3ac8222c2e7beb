package gate_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/bitexact/bitexact"

// layer is the tower position of a package path (relative to the module
// root), as the package doc states it; -1 for utilities any layer may use.
func layer(pkg string) int {
	under := func(prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }
	switch {
	case under("internal"):
		return -1
	case under("refimpl"):
		return 1
	case under("wasm"):
		return 2
	case under("golden"):
		return 3
	case under("conformance/suite"), under("conformance/results"), under("conformance/diagnose"):
		return 4
	case under("conformance/certificate"), under("conformance/record"):
		return 5
	case under("conformance/gate"):
		return 6
	case under("native"), under("conformance/ptxabi"), under("conformance/mutants"), under("conformance/harness"),
		pkg == "conformance", under("bitexacttest"):
		return 7
	case under("cmd"):
		return 8
	}
	return 0
}

// TestImportTower holds the module's non-test Go files, of every build
// tag (cuda, darwin, metal included), to the import order in the package
// doc: no package imports one of a higher layer.
func TestImportTower(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if layer(pkg) == 0 {
			t.Errorf("%s: package %s has no place in the tower (add it to layer and the package doc of conformance/gate)", rel, pkg)
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(p, module+"/")
			if layer(dep) > layer(pkg) {
				t.Errorf("%s imports %s: layer %d imports layer %d", filepath.Join(rel, filepath.Base(path)), dep, layer(pkg), layer(dep))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk missed the module", checked)
	}
}
