package demo

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitexact/bitexact/internal/conformance/record"
)

// TestEcosystemJSON: the embedded matrix is what the records generate, as
// TestEcosystemDoc holds docs/ecosystem.md to them.
func TestEcosystemJSON(t *testing.T) {
	want, err := record.EcosystemJSON("../../../../conformance/harness")
	if err != nil {
		t.Fatal(err)
	}
	got, err := assets.ReadFile("assets/ecosystem.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("assets/ecosystem.json is stale: run 'go run ./cmd/bitexact ecosystem'")
	}
}

// TestEcosystemServed: serve and site both deliver the matrix, with one
// row per record.
func TestEcosystemServed(t *testing.T) {
	files, err := record.ReadAll(os.DirFS("../../../../conformance/harness"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := record.ReadBlocks("../../../../conformance/harness")
	if err != nil {
		t.Fatal(err)
	}
	var nu, nt int
	for _, f := range files {
		if f.Unary != nil {
			nu++
		} else if f.Table != nil {
			nt++
		}
	}
	check := func(name string, b []byte) {
		var m record.Matrix
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.Unary) != nu || len(m.Tables) != nt || len(m.Blocks) != len(blocks) {
			t.Errorf("%s: %d unary, %d table, %d block rows; the records have %d, %d, %d", name,
				len(m.Unary), len(m.Tables), len(m.Blocks), nu, nt, len(blocks))
		}
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/ecosystem.json", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /ecosystem.json: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	check("served", b)
	dir := t.TempDir()
	if _, err := WriteSite(dir); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(dir, "ecosystem.json"))
	if err != nil {
		t.Fatal(err)
	}
	check("site", b)
}
