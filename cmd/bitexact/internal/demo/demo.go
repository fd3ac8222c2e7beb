// Package demo is the browser demo behind `bitexact serve`: one embedded
// page that runs the reference WebAssembly module (wasm.Module(), the very
// bytes that generate the golden data) in the browser through a small WASI
// shim, and shows what the reference computes: a value's code under every
// profile of every format, NVFP4/MXFP4 blocks, AWQ packing and 2:4
// selection.
//
// The page holds no format logic. Every code, scale, packed byte and
// dequantized value on it comes out of the module through its exported
// functions (bitexact_run, bitexact_unary); the JavaScript only encodes
// requests in the module's binary ABI, lays out the results and draws them.
// The lists the page offers (conversions, profiles, recipes, tie rules) and
// their sources are metadata that the handler serves as /meta.json,
// generated from the reference's own tables.
package demo

import (
	"bytes"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/fp8"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm"
)

//go:embed assets/index.html assets/style.css assets/abi.js assets/wasi.js assets/float32.js assets/app.js
var assets embed.FS

// Handler serves the demo: the page and its scripts at /, the reference
// module at /refimpl.wasm and the metadata at /meta.json. It needs nothing
// from the network and keeps no state between requests.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	static := http.FileServerFS(sub)
	mux.Handle("GET /", noStore(static))
	mux.HandleFunc("GET /refimpl.wasm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		w.Header().Set("Cache-Control", "no-store")
		http.ServeContent(w, r, "refimpl.wasm", time.Time{}, bytes.NewReader(module()))
	})
	mux.HandleFunc("GET /meta.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(metaJSON())
	})
	return securityHeaders(mux)
}

var module = sync.OnceValue(wasm.Module)

// noStore keeps a browser from pairing a cached page with a newer module.
func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// securityHeaders confines the page to its own origin: no script, style or
// connection elsewhere, so the demo provably runs offline. 'wasm-unsafe-eval'
// is what compiling a WebAssembly module needs under a CSP.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// Meta is the document served as /meta.json.
type Meta struct {
	Module      ModuleInfo       `json:"module"`
	Conversions []Conversion     `json:"conversions"`
	Formats     []Format         `json:"formats"`
	FP4         []Named          `json:"fp4Profiles"`
	NVFP4       []Named          `json:"nvfp4Recipes"`
	MXModes     []Named          `json:"mxScaleModes"`
	AWQ         []Named          `json:"awqQuantizers"`
	AWQLayout   Named            `json:"awqLayout"`
	TieRules    []Named          `json:"tieRules"`
	Ops         map[string]OpDoc `json:"ops"`
}

// ModuleInfo identifies the module the page runs.
type ModuleInfo struct {
	SHA256    string `json:"sha256"`
	GoVersion string `json:"goVersion"`
	Bytes     int    `json:"bytes"`
}

// Conversion is one entry of unary.All().
type Conversion struct {
	Name    string `json:"name"`
	Format  string `json:"format"`
	Profile string `json:"profile"`
	Bits    int    `json:"bits"`
	Source  string `json:"source"`
}

// Format says how to colour a format's codes and which reference op
// decodes them.
type Format struct {
	Name string `json:"name"`
	// Fields are the sign, exponent and mantissa widths, most
	// significant first.
	Fields [3]int `json:"fields"`
	// Decode is the op that turns codes into float32 values.
	Decode DecodeOp `json:"decode"`
}

// DecodeOp is a decode op and the shape of its input tensor.
type DecodeOp struct {
	Op      string            `json:"op"`
	Params  map[string]string `json:"params"`
	Input   string            `json:"input"`
	DType   string            `json:"dtype"`
	Logical string            `json:"logical"`
}

// Named is a named profile, recipe or rule with its source.
type Named struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// OpDoc is an op's one-line contract.
type OpDoc struct {
	Doc    string            `json:"doc"`
	Params map[string]string `json:"params"`
}

// formats lists the field widths of each format of unary.All(), in its
// order. The FP8 widths come from the reference's Format values; the
// others are fixed by their definitions (OCP MX v1.0 for E2M1 and E8M0,
// IEEE 754 binary16, bfloat16 as the top half of binary32).
func formats() []Format {
	fs := []Format{
		{Name: "e2m1", Fields: [3]int{1, 2, 1}, Decode: DecodeOp{Op: "e2m1.decode", Input: "codes", DType: "U8", Logical: "e2m1"}},
		{Name: fp8.E4M3.Name, Fields: [3]int{1, fp8.E4M3.ExpBits, fp8.E4M3.ManBits}, Decode: DecodeOp{Op: "fp8.decode", Params: map[string]string{"format": "e4m3"}, Input: "codes", DType: "U8", Logical: "e4m3"}},
		{Name: fp8.E5M2.Name, Fields: [3]int{1, fp8.E5M2.ExpBits, fp8.E5M2.ManBits}, Decode: DecodeOp{Op: "fp8.decode", Params: map[string]string{"format": "e5m2"}, Input: "codes", DType: "U8", Logical: "e5m2"}},
		{Name: "e8m0", Fields: [3]int{0, 8, 0}, Decode: DecodeOp{Op: "e8m0.decode", Input: "codes", DType: "U8", Logical: "e8m0"}},
		{Name: "bf16", Fields: [3]int{1, 8, 7}, Decode: DecodeOp{Op: "bf16.decode", Input: "y", DType: "BF16"}},
		{Name: "fp16", Fields: [3]int{1, 5, 10}, Decode: DecodeOp{Op: "fp16.decode", Input: "y", DType: "F16"}},
	}
	for i := range fs {
		if fs[i].Decode.Params == nil {
			fs[i].Decode.Params = map[string]string{}
		}
	}
	return fs
}

// opsShown are the ops the page calls; their Doc lines are shown beside
// the results.
var opsShown = []string{
	"e2m1.encode", "e2m1.decode", "e2m1.unpack", "fp8.decode", "e8m0.decode", "bf16.decode", "fp16.encode", "fp16.decode",
	"nvfp4.quantize", "nvfp4.dequantize", "mxfp4.quantize", "mxfp4.dequantize",
	"awq.quantize", "awq.pack", "awq.unpack", "awq.dequantize",
	"sparse24.select", "sparse24.compress",
}

// BuildMeta assembles the metadata from the reference's tables.
func BuildMeta() Meta {
	m := Meta{
		Module:    ModuleInfo{SHA256: wasm.ModuleDigest(), GoVersion: wasm.ModuleGoVersion(), Bytes: len(module())},
		Formats:   formats(),
		AWQLayout: Named{awq.AWQ.Name, awq.AWQ.Source},
		Ops:       map[string]OpDoc{},
	}
	for _, c := range unary.All() {
		m.Conversions = append(m.Conversions, Conversion{c.Name, c.Format, c.Profile, c.Bits, c.Source})
	}
	for _, p := range fp4.Profiles() {
		m.FP4 = append(m.FP4, Named{p.Name, p.Source})
	}
	for _, r := range nvfp4.Recipes() {
		m.NVFP4 = append(m.NVFP4, Named{r.Name, r.Source})
	}
	for _, s := range e8m0.ScaleModes() {
		m.MXModes = append(m.MXModes, Named{s.Name, s.Source})
	}
	for _, q := range awq.Quantizers() {
		m.AWQ = append(m.AWQ, Named{q.Name, q.Source})
	}
	for _, r := range sparse24.TieRules() {
		m.TieRules = append(m.TieRules, Named{r.Name, r.Source})
	}
	for _, name := range opsShown {
		if op, err := ops.Lookup(name); err == nil {
			m.Ops[name] = OpDoc{op.Doc, op.Params}
		}
	}
	return m
}

var metaJSON = sync.OnceValue(func() []byte {
	b, err := json.Marshal(BuildMeta())
	if err != nil {
		panic(err) // plain strings and ints only
	}
	return b
})
