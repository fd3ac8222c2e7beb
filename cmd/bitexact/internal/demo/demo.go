// Package demo is the browser demo behind `bitexact serve`: one embedded
// page that runs the reference WebAssembly module (wasm.Module(), the very
// bytes that generate the golden data) in the browser through a small WASI
// shim, and shows what the reference computes: a value's code under every
// profile of every format, NVFP4/MXFP4 blocks, AWQ packing and 2:4
// selection, and the ecosystem matrix: which real implementation conforms
// to which profile.
//
// The page holds no format logic. Every code, scale, packed byte and
// dequantized value on it comes out of the module through its exported
// functions (bitexact_run, bitexact_unary); the JavaScript only encodes
// requests in the module's binary ABI, lays out the results and draws them.
// The lists the page offers (conversions, profiles, recipes, tie rules) and
// their sources are metadata that the handler serves as /meta.json,
// generated from the reference's own tables. The ecosystem matrix is
// assets/ecosystem.json, generated from the records under
// conformance/harness by `bitexact ecosystem` and embedded as it is.
//
// WriteSite writes the same page as static files (the module under a
// content-addressed name, everything also gzip-compressed) for any static
// host.
package demo

import (
	"bytes"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/block"
	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/fp4"
	"github.com/bitexact/bitexact/refimpl/nvfp4"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm"
)

//go:embed assets/index.html assets/style.css assets/abi.js assets/wasi.js assets/float32.js assets/app.js assets/ecosystem.json
var assets embed.FS

// Handler serves the demo: the page, its scripts and ecosystem.json at /,
// the reference module at /refimpl.wasm and the metadata at /meta.json. It needs nothing
// from the network and keeps no state between requests.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	static := http.FileServerFS(sub)
	mux.Handle("GET /", noStore(static))
	mux.HandleFunc("GET /"+serverModuleFile, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		w.Header().Set("Cache-Control", "no-store")
		http.ServeContent(w, r, "refimpl.wasm", time.Time{}, bytes.NewReader(module()))
	})
	mux.HandleFunc("GET /meta.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(serverMeta())
	})
	return securityHeaders(wellFormedPaths(mux))
}

// wellFormedPaths answers 400 to a request whose path (percent-decoded)
// is not UTF-8, holds a control character (NUL included), or has a "."
// or ".." element: such a path names no file of the demo, and the file
// server answered 500 to the first ("/%ff"), a server error for a
// client's mistake.
func wellFormedPaths(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if problem := pathProblem(r.URL.Path); problem != "" {
			http.Error(w, "400 bad request: the path "+problem, http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// pathProblem says what is wrong with the decoded URL path p, or "".
func pathProblem(p string) string {
	if !utf8.ValidString(p) {
		return "is not valid UTF-8"
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "holds a control character"
		}
	}
	for _, e := range strings.Split(p, "/") {
		if e == "." || e == ".." {
			return "has a . or .. element"
		}
	}
	return ""
}

var module = sync.OnceValue(wasm.Module)

// serverModuleFile is the module's name under the Go server, which sends
// it with no-store; a static site names it by its digest instead (see
// WriteSite).
const serverModuleFile = "refimpl.wasm"

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
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// csp is the page's Content-Security-Policy.
const csp = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// Meta is the document served as /meta.json.
type Meta struct {
	Module      ModuleInfo   `json:"module"`
	Conversions []Conversion `json:"conversions"`
	Formats     []Format     `json:"formats"`
	// Blocks are the block formats of refimpl/block, with their byte
	// layouts, for the block view.
	Blocks  []BlockFormat `json:"blockFormats"`
	FP4     []Named       `json:"fp4Profiles"`
	NVFP4   []Recipe      `json:"nvfp4Recipes"`
	MXModes []Named       `json:"mxScaleModes"`
	// MXNonFinite says what a NaN or ±Inf does to an MXFP4 block.
	MXNonFinite string           `json:"mxNonFinite"`
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
	// File is the module's path relative to the page.
	File string `json:"file"`
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
	// Bias is the exponent bias: a normal code's value is
	// (-1)^s * 2^(E-Bias) * 1.m, a subnormal's (E = 0) (-1)^s *
	// 2^(1-Bias) * 0.m; E8M0 (no sign, no mantissa) is 2^(E-Bias).
	Bias int `json:"bias"`
	// Specials says which codes are not given by that formula.
	Specials string `json:"specials"`
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

// BlockFormat is one block format of refimpl/block: its block size, its
// byte layout field by field, its ops and its profiles.
type BlockFormat struct {
	Name       string            `json:"name"`
	Title      string            `json:"title"`
	BlockElems int               `json:"blockElems"`
	BlockBytes int               `json:"blockBytes"`
	Elements   string            `json:"elements"`
	Scale      string            `json:"scale"`
	Layout     []BlockField      `json:"layout"`
	Quantize   string            `json:"quantize,omitempty"`
	Dequantize string            `json:"dequantize"`
	Params     map[string]string `json:"params"`
	Profiles   []Named           `json:"profiles"`
}

// BlockField is one field of a block's bytes.
type BlockField struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Bytes  int    `json:"bytes"`
	Kind   string `json:"kind"`
	Doc    string `json:"doc"`
}

// blockFormats lists refimpl/block's formats as the demo shows them.
func blockFormats() []BlockFormat {
	var bs []BlockFormat
	for _, f := range block.Formats() {
		b := BlockFormat{Name: f.Name, Title: f.Title, BlockElems: f.BlockElems, BlockBytes: f.BlockBytes,
			Elements: f.Elements, Scale: f.Scale, Dequantize: f.Dequantize.Op, Params: f.Dequantize.Params}
		if f.Quantize != nil {
			b.Quantize = f.Quantize.Op
		}
		for _, l := range f.Layout {
			b.Layout = append(b.Layout, BlockField{l.Name, l.Offset, l.Bytes, l.Kind, l.Doc})
		}
		for _, p := range f.Profiles {
			b.Profiles = append(b.Profiles, Named{p.Name, p.Source})
		}
		bs = append(bs, b)
	}
	return bs
}

// Named is a named profile, recipe or rule with its source.
type Named struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// Recipe is an NVFP4 recipe with what the block view explains: how the
// per-tensor float32 enters dequantization and how a NaN enters a block's
// amax.
type Recipe struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// PerTensor is "divide" (the stored float32 is the encode-side scale
	// g: y = e2m1 * e4m3 / g) or "multiply" (the stored float32 is the
	// decode-side p: y = e2m1 * e4m3 * p).
	PerTensor string `json:"perTensor"`
	// NaNAmax is "ignore" (a NaN element does not enter the block amax) or
	// "propagate" (it makes the block amax NaN).
	NaNAmax string `json:"nanAmax"`
}

// OpDoc is an op's one-line contract.
type OpDoc struct {
	Doc    string            `json:"doc"`
	Params map[string]string `json:"params"`
}

// formats lists each format of unary.All(), in its order, with its fields
// and specials as the reference declares them (unary.Formats) and the op
// that decodes it (its DecodeOp).
func formats() []Format {
	var fs []Format
	for _, f := range unary.Formats() {
		d := f.DecodeOp
		fs = append(fs, Format{Name: f.Name, Fields: [3]int{f.Fields.Sign, f.Fields.Exp, f.Fields.Man}, Bias: f.Fields.Bias,
			Specials: f.Specials, Decode: DecodeOp{Op: d.Op, Params: f.DecodeParams(), Input: d.Input, DType: d.DType, Logical: d.Logical}})
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

// buildMeta assembles the metadata from the reference's tables, for a page
// that finds the module at moduleFile (relative to the page).
func buildMeta(moduleFile string) Meta {
	m := Meta{
		Module:    ModuleInfo{SHA256: wasm.ModuleDigest(), GoVersion: wasm.ModuleGoVersion(), Bytes: len(module()), File: moduleFile},
		Formats:   formats(),
		Blocks:    blockFormats(),
		AWQLayout: Named{awq.AWQ.Name, awq.AWQ.Source},
		// The rule of refimpl/mxfp4 (its package doc; OCP MX v1.0 §6.3).
		MXNonFinite: "a NaN or ±Inf anywhere makes the block amax non-finite, the E8M0 shared scale 0xFF (NaN), and so the whole block NaN (OCP MX v1.0 §6.3); the element codes are those of a NaN under the E2M1 profile.",
		Ops:         map[string]OpDoc{},
	}
	for _, c := range unary.All() {
		m.Conversions = append(m.Conversions, Conversion{c.Name, c.Format, c.Profile, c.Bits, c.Source})
	}
	for _, p := range fp4.Profiles() {
		m.FP4 = append(m.FP4, Named{p.Name, p.Source})
	}
	for _, r := range nvfp4.Recipes() {
		rc := Recipe{Name: r.Name, Source: r.Source, PerTensor: "divide", NaNAmax: "ignore"}
		if r.PerTensor == nvfp4.DecodeScale {
			rc.PerTensor = "multiply"
		}
		if r.BlockAmax == nvfp4.PropagateNaN {
			rc.NaNAmax = "propagate"
		}
		m.NVFP4 = append(m.NVFP4, rc)
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
	for _, f := range block.Formats() {
		if f.Quantize != nil {
			opsShownAlso(m.Ops, f.Quantize.Op)
		}
		opsShownAlso(m.Ops, f.Dequantize.Op)
	}
	for _, name := range opsShown {
		if op, err := ops.Lookup(name); err == nil {
			m.Ops[name] = OpDoc{op.Doc, op.Params}
		}
	}
	return m
}

// opsShownAlso adds op's contract to docs.
func opsShownAlso(docs map[string]OpDoc, name string) {
	if op, err := ops.Lookup(name); err == nil {
		docs[name] = OpDoc{op.Doc, op.Params}
	}
}

var serverMeta = sync.OnceValue(func() []byte { return metaJSON(serverModuleFile) })

func metaJSON(moduleFile string) []byte {
	b, err := json.Marshal(buildMeta(moduleFile))
	if err != nil {
		panic(err) // plain strings and ints only
	}
	return b
}
