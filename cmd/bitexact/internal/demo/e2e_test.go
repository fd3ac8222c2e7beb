package demo

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/refimpl/awq"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/sparse24"
	"github.com/bitexact/bitexact/refimpl/tensor"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm"
)

// TestBrowser loads the page from the demo handler in real headless
// Chromium, enters values in each view, and checks that every code, scale
// and packed byte the page shows (computed by the wasm module in the
// browser) equals what the native Go reference computes here. It saves a
// screenshot of each view to $BITEXACT_ARTIFACTS (else a temporary
// directory).
//
// Chromium comes from Debian's chromium package (.ci/run installs it); the
// test skips when no browser is found.
func TestBrowser(t *testing.T) {
	path, ok := findChromium()
	if !ok {
		t.Skip("no Chromium found (install Debian's chromium package, or set BITEXACT_CHROMIUM)")
	}
	art := os.Getenv("BITEXACT_ARTIFACTS")
	if art == "" {
		art = t.TempDir()
	} else if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler())
	defer srv.Close()

	b := startBrowser(t, path)
	desktop(t, b)
	t.Run("enter before ready", func(t *testing.T) { testBeforeReady(t, b) })
	t.Logf("page ready in %v (bitexact serve's handler, loopback; load, module compile, every view)", loadTime(t, b, srv.URL+"/"))

	var digest string
	b.eval(t, `document.getElementById("digest").textContent`, &digest)
	if want := wasm.ModuleDigest(); digest != want {
		t.Errorf("page computed module sha256 %s, want wasm.ModuleDigest() %s", digest, want)
	}

	t.Run("parser", func(t *testing.T) { testParser(t, b) })
	t.Run("value", func(t *testing.T) { testValue(t, b) })
	b.screenshot(t, "value", filepath.Join(art, "demo-value.png"))
	t.Run("block", func(t *testing.T) { testBlock(t, b) })
	b.screenshot(t, "block", filepath.Join(art, "demo-block.png"))
	t.Run("awq", func(t *testing.T) { testAWQ(t, b) })
	b.screenshot(t, "awq", filepath.Join(art, "demo-awq.png"))
	t.Run("sparse24", func(t *testing.T) { testSparse24(t, b) })
	b.screenshot(t, "sp", filepath.Join(art, "demo-sparse24.png"))
	t.Run("bad input", func(t *testing.T) { testBadInput(t, b) })
	t.Run("guest failure", func(t *testing.T) { testGuestFailure(t, b) })
	b.screenshot(t, "block", filepath.Join(art, "demo-bad-input.png"))
	t.Run("decode", func(t *testing.T) { testDecode(t, b) })
	t.Run("block with NaN and Inf", func(t *testing.T) { testBlockNonFinite(t, b) })
	t.Run("caps", func(t *testing.T) { testCaps(t, b) })
	t.Run("long value", func(t *testing.T) { testLongValue(t, b, 1240) })
	t.Run("url round trip", func(t *testing.T) { testURL(t, b, srv.URL) })
	t.Run("ecosystem", func(t *testing.T) { testEcosystem(t, b, srv.URL) })

	// The pictures of the README and docs/rationale/demo.md (docs/demo-*.png):
	// each view on a telling input, on a desktop and on a 400 px phone.
	setViews(t, b)
	for _, v := range []string{"value", "block", "awq", "sp", "ecosystem"} {
		shot(t, b, v, filepath.Join(art, "demo-"+v+".png"), shotHeight(v, 860))
	}
	b.eval(t, `document.activeElement.blur(); window.scrollTo(0, 0)`, nil)
	b.screenshotClip(t, 0, 0, 1240, 900, filepath.Join(art, "demo-overview.png"))
	t.Run("phone", func(t *testing.T) { testPhone(t, b, art) })
	desktop(t, b)
	t.Run("static site", func(t *testing.T) { testStaticSite(t, b) })
	t.Logf("screenshots in %s", art)

	b.mu.Lock()
	defer b.mu.Unlock()
	for _, line := range b.console {
		var entry struct {
			Entry struct{ Level, Text, URL string }
		}
		var call struct{ Type string }
		switch {
		case strings.HasPrefix(line, "Runtime.consoleAPICalled: "):
			// The page logs unexpected failures, and the guest's stderr,
			// with console.error.
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "Runtime.consoleAPICalled: ")), &call) == nil && call.Type == "error" {
				t.Errorf("console error in the page: %.2000s", line)
			}
		case strings.HasPrefix(line, "Runtime.exceptionThrown"):
			t.Errorf("uncaught exception in the page: %s", line)
		case strings.HasPrefix(line, "Log.entryAdded: "):
			// Errors the browser logs: a resource that failed to load, a
			// Content-Security-Policy violation.
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "Log.entryAdded: ")), &entry) == nil && entry.Entry.Level == "error" {
				t.Errorf("browser error: %s %s", entry.Entry.Text, entry.Entry.URL)
			}
		}
	}
}

// submit types text into the input (as keyboard text input, replacing what
// is there), submits the view's form and waits for the view to finish. It
// returns the view's status: "ok" or "error".
func submit(t *testing.T, b *browser, view, input, text string) string {
	t.Helper()
	var seq int
	b.eval(t, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.focus(); e.select(); return Number(document.getElementById(%q).dataset.seq || 0); })()`, input, view), &seq)
	b.call(t, b.session, "Input.insertText", map[string]any{"text": text}, nil)
	b.eval(t, fmt.Sprintf(`document.getElementById(%q).requestSubmit()`, view+"-form"), nil)
	return wait(t, b, view, seq)
}

// choose picks an option of a select element and waits for the view.
func choose(t *testing.T, b *browser, view, id, value string) string {
	t.Helper()
	var seq int
	b.eval(t, fmt.Sprintf(`(() => { const n = Number(document.getElementById(%q).dataset.seq || 0);
		const s = document.getElementById(%q); s.value = %q; s.dispatchEvent(new Event("change")); return n; })()`, view, id, value), &seq)
	return wait(t, b, view, seq)
}

func wait(t *testing.T, b *browser, view string, seq int) string {
	t.Helper()
	b.waitFor(t, view+" to update", fmt.Sprintf(`(() => { const s = document.getElementById(%q).dataset; return Number(s.seq) > %d && s.status !== "busy"; })()`, view, seq), 30*time.Second)
	var st string
	b.eval(t, fmt.Sprintf(`document.getElementById(%q).dataset.status`, view), &st)
	return st
}

// texts returns the text of every element matching a CSS selector.
func texts(t *testing.T, b *browser, sel string) []string {
	t.Helper()
	var out []string
	b.eval(t, fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.textContent)`, sel), &out)
	return out
}

func attrs(t *testing.T, b *browser, sel, attr string) []string {
	t.Helper()
	var out []string
	b.eval(t, fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.getAttribute(%q))`, sel, attr), &out)
	return out
}

func run(t *testing.T, op string, p ops.Params, in ops.Tensors) ops.Tensors {
	t.Helper()
	out, err := ops.Run(op, p, in)
	if err != nil {
		t.Fatalf("native %s: %v", op, err)
	}
	return out
}

func hexCodes(b []byte, digits int) []string {
	s := make([]string, len(b))
	for i, v := range b {
		s[i] = fmt.Sprintf("0x%0*x", digits, v)
	}
	return s
}

func hexBytes(b []byte) string {
	s := make([]string, len(b))
	for i, v := range b {
		s[i] = fmt.Sprintf("%02x", v)
	}
	return strings.Join(s, " ")
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// parse32 is the CLI's reading of a VALUE (strconv.ParseFloat(s, 32),
// overflow to infinity), which the page's parser must match.
func parse32(t *testing.T, s string) uint32 {
	t.Helper()
	switch strings.ToLower(s) {
	case "nan":
		return 0x7fc00000
	case "-nan":
		return 0xffc00000
	}
	if h, ok := strings.CutPrefix(s, "bits:0x"); ok {
		u, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(u)
	}
	v, err := strconv.ParseFloat(s, 32)
	if err != nil && !strings.Contains(err.Error(), "value out of range") {
		t.Fatalf("ParseFloat(%q): %v", s, err)
	}
	return math.Float32bits(float32(v))
}

func testValue(t *testing.T, b *browser) {
	cases := []struct{ name, in string }{
		{"exactly an E2M1 midpoint, ties differ", "2.5"},
		{"E2M1 tie at 0.25, the sign of zero differs", "-0.25"},
		{"E4M3 overflow: satfinite 448, nosat NaN", "480"},
		{"E4M3 tie at 464 rounds to even 448 under both profiles", "464"},
		{"float32 subnormal", "1e-40"},
		{"negative NaN", "-nan"},
		{"positive NaN", "nan"},
		{"hex float", "0x1.8p-1"},
		{"largest float32", "bits:0x7f7fffff"},
		// 1 + 2^-24 is the midpoint between float32 1 and 1 + 2^-23; this
		// decimal lies just above it, so it rounds up. Rounding through
		// float64 first lands exactly on the midpoint and ties to 1.
		{"double rounding trap: decimal just above a float32 midpoint", "1.000000059604644775390625001"},
		// 2^128 - 2^103 is the overflow threshold; this decimal is just
		// below it, so it is the largest finite float32, not infinity.
		{"just below the float32 overflow threshold", "3.4028235677973366e38"},
		{"beyond float32 range", "1e39"},
		{"negative zero", "-0"},
	}
	convs := unary.All()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if st := submit(t, b, "value", "value-input", c.in); st != "ok" {
				t.Fatalf("view status %q for %q: %q", st, c.in, texts(t, b, "#value-error"))
			}
			bits := parse32(t, c.in)
			x := math.Float32frombits(bits)
			if got := texts(t, b, "#value-bits"); len(got) != 1 || got[0] != fmt.Sprintf("0x%08x", bits) {
				t.Fatalf("float32 of %q: page shows %q, strconv.ParseFloat(s, 32) gives 0x%08x", c.in, got, bits)
			}
			var shown map[string]string
			b.eval(t, `Object.fromEntries(Array.from(document.querySelectorAll("[data-conv]"), e => [e.dataset.conv, e.textContent]))`, &shown)
			if len(shown) != len(convs) {
				t.Errorf("page shows %d conversions, unary.All() has %d", len(shown), len(convs))
			}
			for _, cv := range convs {
				want := fmt.Sprintf("0x%0*x", (cv.Bits+3)/4, cv.Encode(x))
				if got := shown[cv.Name]; got != want {
					t.Errorf("%s(%s): page shows %q, refimpl/unary gives %s", cv.Name, c.in, got, want)
				}
			}
			checkNeighbours(t, b, convs, x)
			checkWhy(t, b, c.in)
		})
	}
}

// checkWhy: every row where a profile disagrees with the first has one
// sentence saying why, and on the inputs built for it, the right reason.
func checkWhy(t *testing.T, b *browser, in string) {
	t.Helper()
	var r struct {
		Differs int
		Why     map[string]string
	}
	b.eval(t, `({Differs: document.querySelectorAll("#value-out tr.differs").length,
		Why: Object.fromEntries(Array.from(document.querySelectorAll("[data-why]"), e => [e.dataset.why, e.textContent]))})`, &r)
	if len(r.Why) != r.Differs {
		t.Errorf("%d rows disagree, %d say why", r.Differs, len(r.Why))
	}
	want := map[string]map[string]string{
		"2.5":  {"e2m1/ties-away": "ties-away ≠ nvidia why: tie: x is exactly halfway between 2 and 3"},
		"480":  {"e4m3/nosat": "nosat ≠ satfinite why: overflow:"},
		"-nan": {"bf16/canonical-nan": "canonical-nan ≠ rne why: NaN sign: x is a negative NaN; canonical-nan drops its sign (0x7fff)"},
		"nan":  {"bf16/canonical-nan": "canonical-nan ≠ rne why: NaN payload: both give a NaN of the same sign"},
		// A tie between -0.5 and 0 that nvidia rounds to -0 (even code 0x8).
		"-0.25": {"e2m1/ties-away": "ties-away ≠ nvidia why: tie: x is exactly halfway between -0.5 and 0; nvidia rounds the tie to the even code (here toward zero) (-0)"},
		"1e39":  {"e4m3/nosat": "nosat ≠ satfinite why: overflow: |x| is beyond the largest finite E4M3 value 448; satfinite gives the largest finite value 448, nosat gives NaN (saturate vs NaN)."},
	}[in]
	for conv, prefix := range want {
		if !strings.HasPrefix(r.Why[conv], prefix) {
			t.Errorf("%s at %s: why %q, want it to start %q", conv, in, r.Why[conv], prefix)
		}
	}
	if in == "480" {
		// The case exists to show the two overflow rules: they must differ.
		sat, _ := unary.Lookup("e4m3/satfinite")
		nosat, _ := unary.Lookup("e4m3/nosat")
		if sat.Encode(480) == nosat.Encode(480) {
			t.Errorf("E4M3 satfinite and nosat agree at 480 (0x%02x): the case tests nothing", sat.Encode(480))
		}
	}
}

// checkNeighbours compares the neighbour codes the page shows with the
// representable values of each format, from the reference's Decode: the
// largest value below x, the smallest above (the lowest code among equal
// values), and x's own code when x is representable.
func checkNeighbours(t *testing.T, b *browser, convs []unary.Conversion, x float32) {
	t.Helper()
	var shown map[string][4]string
	b.eval(t, `Object.fromEntries(Array.from(document.querySelectorAll("p.nb[data-format]"), p => [p.dataset.format,
		[".nb-below", ".nb-equal", ".nb-above"].map(s => { const e = p.querySelector(s); return e ? e.dataset.code : "-"; }).concat([p.dataset.tie])]))`, &shown)
	if x != x {
		if len(shown) != 0 {
			t.Errorf("x is NaN, page shows neighbours %v", shown)
		}
		return
	}
	seen := map[string]bool{}
	for _, cv := range convs {
		if seen[cv.Format] {
			continue
		}
		seen[cv.Format] = true
		below, equal, above := -1, -1, -1
		var vb, va float32
		for c := 0; c < 1<<cv.Bits; c++ {
			v := cv.Decode(uint32(c))
			switch {
			case v != v:
			case v < x && (below < 0 || v > vb):
				below, vb = c, v
			case v > x && (above < 0 || v < va):
				above, va = c, v
			case v == x && (equal < 0 || (math.Signbit(float64(v)) == math.Signbit(float64(x)) && math.Signbit(float64(cv.Decode(uint32(equal)))) != math.Signbit(float64(x)))):
				equal = c
			}
		}
		f := func(c int, present bool) string {
			if !present {
				return "-"
			}
			if c < 0 {
				return ""
			}
			return fmt.Sprintf("0x%0*x", (cv.Bits+3)/4, c)
		}
		// x is a tie when it lies exactly halfway between two neighbours
		// (float64 holds their sum and its half exactly).
		tie := ""
		if equal < 0 && below >= 0 && above >= 0 && (float64(vb)+float64(va))/2 == float64(x) {
			tie = "1"
		}
		want := [4]string{f(below, true), f(equal, equal >= 0), f(above, true), tie}
		if shown[cv.Format] != want {
			t.Errorf("%s neighbours of %v: page shows (below, equal, above, tie) %q, the reference's Decode gives %q", cv.Format, x, shown[cv.Format], want)
		}
	}
}

// block32 is the page's default block.
const block32 = "0.12 -0.5 1.9 3.3 -0.07 0.75 -2.4 0.002 5.1 -1.25 0.4 0.61 -3.9 2.2 -0.33 1.05 0.9 -0.44 0.27 -1.7 2.9 0.05 -0.8 1.3 -0.15 0.66 -2.05 0.38 1.58 -0.92 0.21 -4.4"

func floats(t *testing.T, s string) []float32 {
	var v []float32
	for _, f := range strings.Fields(s) {
		v = append(v, math.Float32frombits(parse32(t, f)))
	}
	return v
}

func testBlock(t *testing.T, b *browser) {
	cases := []struct {
		name, in, recipe, mode, profile string
	}{
		{"32 values, canonical recipe, OCP floor scale", block32, "canonical", "floor", "nvidia"},
		{"32 values, vllm-model-exact-rcp recipe, rceil scale", block32, "vllm-model-exact-rcp", "rceil", "ml_dtypes"},
		{"16 values with an outlier", "0.01 -0.02 0.03 0.004 -0.5 0.25 0.125 -0.0625 100 0 -0 1e-8 0.75 -0.75 2.5 -2.5", "canonical", "floor", "nvidia"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			choose(t, b, "block", "nv-recipe", c.recipe)
			choose(t, b, "block", "mx-mode", c.mode)
			choose(t, b, "block", "mx-profile", c.profile)
			if st := submit(t, b, "block", "block-input", c.in); st != "ok" {
				t.Fatalf("view status %q: %q", st, texts(t, b, "#block-error"))
			}
			x := floats(t, c.in)
			k := len(x)
			xt := tensor.FromF32([]int{1, k}, x)
			q := run(t, "nvfp4.quantize", ops.Params{"recipe": c.recipe}, ops.Tensors{"x": xt})
			codes := run(t, "e2m1.unpack", nil, ops.Tensors{"packed": q["packed"]})["codes"]
			y := run(t, "nvfp4.dequantize", ops.Params{"recipe": c.recipe}, q)["y"]
			equal(t, "NVFP4 codes", texts(t, b, ".nv-code"), hexCodes(codes.Data, 1))
			equal(t, "NVFP4 scales", texts(t, b, ".nv-scale"), hexCodes(q["scales"].Data, 2))
			equal(t, "NVFP4 packed", texts(t, b, ".nv-packed"), []string{hexBytes(q["packed"].Data)})
			equal(t, "NVFP4 dequantized bits", attrs(t, b, ".nv-y", "data-bits"), bitsHex(y.Bits32()))
			if k%32 != 0 {
				if n := len(texts(t, b, ".mx-code")); n != 0 {
					t.Errorf("%d values: page shows %d MXFP4 codes, want none (an MX block is 32)", k, n)
				}
				return
			}
			mq := run(t, "mxfp4.quantize", ops.Params{"mode": c.mode, "profile": c.profile}, ops.Tensors{"x": xt})
			mcodes := run(t, "e2m1.unpack", nil, ops.Tensors{"packed": mq["packed"]})["codes"]
			my := run(t, "mxfp4.dequantize", nil, mq)["y"]
			equal(t, "MXFP4 codes", texts(t, b, ".mx-code"), hexCodes(mcodes.Data, 1))
			equal(t, "MXFP4 scales", texts(t, b, ".mx-scale"), hexCodes(mq["scales"].Data, 2))
			equal(t, "MXFP4 packed", texts(t, b, ".mx-packed"), []string{hexBytes(mq["packed"].Data)})
			equal(t, "MXFP4 dequantized bits", attrs(t, b, ".mx-y", "data-bits"), bitsHex(my.Bits32()))
		})
	}
	// Leave the defaults for the screenshot.
	choose(t, b, "block", "nv-recipe", "canonical")
	choose(t, b, "block", "mx-mode", "floor")
	choose(t, b, "block", "mx-profile", "nvidia")
	submit(t, b, "block", "block-input", block32)
}

func bitsHex(v []uint32) []string {
	s := make([]string, len(v))
	for i, u := range v {
		s[i] = fmt.Sprintf("%08x", u)
	}
	return s
}

// awqDefault is the page's default AWQ input: 4 input channels x 8 columns.
const awqDefault = `0.031 -0.012 0.044 0.007 -0.027 0.019 -0.038 0.002
-0.009 0.025 -0.016 0.033 0.011 -0.041 0.006 -0.021
0.017 0.004 -0.029 -0.013 0.036 0.008 -0.005 0.028
-0.022 -0.035 0.012 0.021 -0.003 0.015 0.030 -0.011`

func testAWQ(t *testing.T, b *browser) {
	for _, quantizer := range []string{"autoawq", "forge"} { // forge last: the screenshot shows the default
		t.Run(quantizer, func(t *testing.T) {
			choose(t, b, "awq", "awq-quantizer", quantizer)
			if st := submit(t, b, "awq", "awq-input", awqDefault); st != "ok" {
				t.Fatalf("view status %q: %q", st, texts(t, b, "#awq-error"))
			}
			x := floats(t, awqDefault)
			w := run(t, "fp16.encode", nil, ops.Tensors{"x": tensor.FromF32([]int{len(x) / 8, 8}, x)})["y"]
			q := run(t, "awq.quantize", ops.Params{"quantizer": quantizer, "group": "-1"}, ops.Tensors{"w": w})
			var words []string
			for _, v := range q["qweight"].Bits32() {
				words = append(words, fmt.Sprintf("0x%08x", v))
			}
			equal(t, "qweight words", texts(t, b, ".awq-qweight"), words)
			equal(t, "qzeros word", texts(t, b, ".awq-qzeros"), []string{fmt.Sprintf("0x%08x", q["qzeros"].Bits32()[0])})
			var scales []string
			for _, v := range q["scales"].Bits16() {
				scales = append(scales, fmt.Sprintf("0x%04x", v))
			}
			equal(t, "scales", texts(t, b, ".awq-scale"), scales)
			// The nibble map the page derives from awq.pack must be
			// AutoAWQ's order_map (awq.OrderAWQ: column ORDER[p] at
			// nibble p; casper-hansen/AutoAWQ awq/modules/linear/gemm.py).
			var want []string
			for p := 7; p >= 0; p-- {
				want = append(want, strconv.Itoa(awq.OrderAWQ[p]))
			}
			equal(t, "nibble map of the first word (nibble 7 first)", attrs(t, b, ".word:first-of-type .nib", "data-col"), want)
		})
	}
}

// sp24Default is the page's default 2:4 row.
const sp24Default = "6 -6 1 1  0 0.5 -0.5 0  3 0 0 0  0 0 0 0  -1 2 -4 4  1.5 1.5 1.5 -1.5  0 0 0 -2  0.5 -3 0 2"

func testSparse24(t *testing.T, b *browser) {
	x := floats(t, sp24Default)
	codes := run(t, "e2m1.encode", nil, ops.Tensors{"x": tensor.FromF32([]int{1, len(x)}, x)})["codes"]
	// Groups on which the rules disagree: the page marks them.
	metas := map[string][]byte{}
	for _, r := range sparse24.TieRules() {
		metas[r.Name] = run(t, "sparse24.select", ops.Params{"tie": r.Name}, ops.Tensors{"codes": codes})["meta"].Data
	}
	var contested []string
	for g := range metas["lower-index"] {
		for _, r := range sparse24.TieRules() {
			if metas[r.Name][g] != metas["lower-index"][g] {
				contested = append(contested, strconv.Itoa(g))
				break
			}
		}
	}
	if len(contested) == 0 {
		t.Fatal("the default row has no group where tie rules disagree; it no longer shows the tie rule")
	}
	for _, r := range []string{"signed", "cutlass", "lower-index"} { // canonical last, for the screenshot
		t.Run(r, func(t *testing.T) {
			choose(t, b, "sp", "sp-tie", r)
			if st := submit(t, b, "sp", "sp-input", sp24Default); st != "ok" {
				t.Fatalf("view status %q: %q", st, texts(t, b, "#sp-error"))
			}
			c := run(t, "sparse24.compress", ops.Params{"tie": r}, ops.Tensors{"codes": codes})
			equal(t, "compressed bytes", texts(t, b, ".sp-comp"), []string{hexBytes(c["comp"].Data)})
			equal(t, "metadata bytes", texts(t, b, ".sp-meta"), []string{hexBytes(c["meta"].Data)})
			var kept []string
			for _, m := range metas[r] {
				kept = append(kept, fmt.Sprintf("%d,%d", m&3, m>>2))
			}
			equal(t, "kept indices per group", texts(t, b, ".sp-kept"), kept)
			equal(t, "groups marked as decided differently by another rule", attrs(t, b, ".group.contested", "data-group"), contested)
		})
	}
}

// testBadInput: text that is not a number, or a wrong count, gives an
// inline message and no results; the view works again afterwards.
func testBadInput(t *testing.T, b *browser) {
	cases := []struct{ name, view, input, text, want string }{
		{"not a number", "value", "value-input", "0.5x", `"0.5x" is not a number`},
		{"bad bit pattern", "value", "value-input", "bits:0x123456789", "not a 32-bit hex pattern"},
		{"empty value", "value", "value-input", " ", "empty value"},
		{"block of 15", "block", "block-input", strings.Repeat("1 ", 15), "a block is 16 or 32 values; got 15"},
		{"word in a block", "block", "block-input", "1 2 three 4", `value 3: "three" is not a number`},
		{"AWQ row of 7", "awq", "awq-input", "1 2 3 4 5 6 7", "give 8 weights per row"},
		{"2:4 row of 6", "sp", "sp-input", "1 2 3 4 5 6", "a multiple of 8 FP4 values"},
		// The reference's own refusal reaches the page: a non-finite
		// weight is an error of the forge quantizer.
		{"reference error", "awq", "awq-input", "inf 0 0 0 0 0 0 0", "The reference says:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if st := submit(t, b, c.view, c.input, c.text); st != "error" {
				t.Fatalf("status %q for %q, want error", st, c.text)
			}
			var r struct {
				Msg     string
				Visible bool
				Out     int
			}
			b.eval(t, fmt.Sprintf(`(() => { const e = document.getElementById(%q);
				return {Msg: e.textContent, Visible: !e.hidden && e.offsetHeight > 0, Out: document.getElementById(%q).childElementCount}; })()`,
				c.view+"-error", c.view+"-out"), &r)
			if !r.Visible || !strings.Contains(r.Msg, c.want) {
				t.Errorf("message %q (visible %v), want one containing %q", r.Msg, r.Visible, c.want)
			}
			if r.Out != 0 {
				t.Errorf("stale results left beside the message")
			}
		})
	}
	// The page recovers.
	if st := submit(t, b, "value", "value-input", "0.75"); st != "ok" {
		t.Errorf("after bad input, a good value gives status %q", st)
	}
	// The last bad block stays on screen for the screenshot.
	submit(t, b, "block", "block-input", strings.Repeat("1 ", 15))
}

func TestMeta(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/meta.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m Meta
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.Module.SHA256 != wasm.ModuleDigest() {
		t.Errorf("meta digest %s, want %s", m.Module.SHA256, wasm.ModuleDigest())
	}
	if len(m.Conversions) != len(unary.All()) {
		t.Errorf("meta lists %d conversions, unary.All() %d", len(m.Conversions), len(unary.All()))
	}
	formats := map[string]bool{}
	for _, f := range m.Formats {
		formats[f.Name] = true
		if _, err := ops.Lookup(f.Decode.Op); err != nil {
			t.Errorf("format %s: decode op: %v", f.Name, err)
		}
	}
	for _, c := range unary.All() {
		if !formats[c.Format] {
			t.Errorf("conversion %s: format %s has no field layout in the page's metadata", c.Name, c.Format)
		}
		n := 0
		for _, f := range m.Formats {
			if f.Name == c.Format {
				n = f.Fields[0] + f.Fields[1] + f.Fields[2]
			}
		}
		if n != c.Bits {
			t.Errorf("conversion %s: fields add up to %d bits, the code has %d", c.Name, n, c.Bits)
		}
	}
	// Every source shown must be something a reader can open: not a file
	// of the project's private seed material.
	sources := []string{m.AWQLayout.Source}
	for _, c := range m.Conversions {
		sources = append(sources, c.Source)
	}
	for _, l := range [][]Named{m.FP4, m.MXModes, m.AWQ, m.TieRules} {
		for _, n := range l {
			sources = append(sources, n.Source)
		}
	}
	for _, r := range m.NVFP4 {
		sources = append(sources, r.Source)
	}
	// Paths of the project's private workspace, which a reader of the
	// demo cannot open (the pattern is written so that it does not match
	// itself when the repository is searched for such references).
	private := regexp.MustCompile(`shared/|[.]exp/`)
	for _, s := range sources {
		if private.MatchString(s) {
			t.Errorf("source %q points at a file outside the public repository", s)
		}
	}
	for _, name := range opsShown {
		if _, ok := m.Ops[name]; !ok {
			t.Errorf("op %s is not registered", name)
		}
	}
}

func TestServesModule(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for _, c := range []struct{ path, ctype string }{
		{"/refimpl.wasm", "application/wasm"},
		{"/", "text/html; charset=utf-8"},
		{"/app.js", "text/javascript; charset=utf-8"},
	} {
		resp, err := srv.Client().Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ctype {
			t.Errorf("GET %s: %d %q, want 200 %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.ctype)
		}
		if resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", c.path)
		}
	}
}

// testParser runs the page's float32 reader (assets/float32.js) on inputs
// at rounding edges and compares with strconv.ParseFloat(s, 32), the CLI's
// reader: accepted or not, and the bits.
func testParser(t *testing.T, b *browser) {
	inputs := []string{
		"0", "-0", "+1", ".5", "5.", "1E3", "1.e2", "INF", "-Infinity", "+inf",
		// float32 midpoints and their neighbours, decimal and hex
		"1.000000059604644775390625", "1.000000059604644775390625001", "1.000000059604644775390624999",
		"1.0000001788139343261718750", "0x1.000001p0", "0x1.0000018p0", "0x1.0000010000000000000001p0", "0x1.0000030p0",
		// subnormals, the smallest, and the tie below it
		"1e-45", "7e-46", "7.006492321624085e-46", "7.0064923216240862e-46", "0x1p-149", "0x1p-150", "0x1.0000000000001p-150", "0x3p-151",
		"1.1754942e-38", "1.17549435e-38", "0x.fffffep-126", "0x.ffffffp-126",
		// the overflow threshold 2^128 - 2^103
		"3.4028234663852886e38", "3.4028235677973366e38", "340282356779733661637539395458142568448", "340282356779733661637539395458142568447",
		"-340282356779733661637539395458142568448", "0x1.fffffep127", "0x1.ffffffp127", "0x1.fffffefffffffp127", "1e39", "1e-50", "-1e-50",
		"123456789", "16777217", "16777219", "0.1", "0.2", "0.3", "3.14159265358979323846", "6.02214076e23", "1e-7",
		"0x10p-4", "0xABCp-3", "0X1P+1",
		// not numbers, for both readers
		"", "abc", "1e", "0x1p", "0x1", "--1", "1.2.3", "e5", "0x", ".", "nan1",
		// digit separators, as Go literals allow them
		"1_000", "0x_1p0", "1__0", "_1", "1_", "1_.5", "1._5", "1.2_5", "1e1_0", "1e_10", "0x1_p0", "0x1.8_0p1", "+_1",
	}
	type res struct {
		Bits uint32
		Err  string
	}
	var got []res
	js, _ := json.Marshal(inputs)
	b.eval(t, fmt.Sprintf(`import("/float32.js").then(m => %s.map(s => { try { return {Bits: m.parseF32(s), Err: ""}; } catch (e) { return {Bits: 0, Err: e.message}; } }))`, js), &got)
	if len(got) != len(inputs) {
		t.Fatalf("got %d results for %d inputs", len(got), len(inputs))
	}
	for i, in := range inputs {
		v, err := strconv.ParseFloat(in, 32)
		ok := err == nil || strings.Contains(err.Error(), "value out of range")
		switch {
		case !ok && got[i].Err == "":
			t.Errorf("%q: page reads 0x%08x, strconv.ParseFloat(s, 32) refuses it: %v", in, got[i].Bits, err)
		case ok && got[i].Err != "":
			t.Errorf("%q: page refuses it (%s), strconv.ParseFloat(s, 32) reads 0x%08x", in, got[i].Err, math.Float32bits(float32(v)))
		case ok && got[i].Bits != math.Float32bits(float32(v)):
			t.Errorf("%q: page reads 0x%08x, strconv.ParseFloat(s, 32) 0x%08x", in, got[i].Bits, math.Float32bits(float32(v)))
		}
	}
}

// testGuestFailure makes the guest's Go runtime die (a second _initialize
// is fatal: "randinit twice") and checks that the page reports it with the
// guest's stderr, drops the instance, and computes on a fresh one, as
// package wasm's pool does.
func testGuestFailure(t *testing.T, b *browser) {
	b.mu.Lock()
	mark := len(b.console)
	b.mu.Unlock()
	var msg string
	b.eval(t, `bitexact.ref.guard(x => x._initialize()).then(() => "no error", e => e.message)`, &msg)
	if !strings.Contains(msg, "the guest failed") || !strings.Contains(msg, "guest stderr: fatal error") {
		t.Errorf("a fatal error in the guest gives %q, want the failure and the guest's stderr", msg)
	}
	// The guest's dying words went to console.error on purpose: drop them.
	b.mu.Lock()
	b.console = b.console[:mark]
	b.mu.Unlock()
	if st := submit(t, b, "value", "value-input", "2.5"); st != "ok" {
		t.Fatalf("after a guest failure the value view gives status %q: %q", st, texts(t, b, "#value-error"))
	}
	for _, c := range unary.All() {
		want := fmt.Sprintf("0x%0*x", (c.Bits+3)/4, c.Encode(2.5))
		if got := texts(t, b, `[data-conv="`+c.Name+`"]`); len(got) != 1 || got[0] != want {
			t.Errorf("after a guest failure, %s(2.5) shows %q, want %s", c.Name, got, want)
		}
	}
}

// desktop and phone set the viewport.
func desktop(t *testing.T, b *browser) {
	b.call(t, b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1240, "height": 1000, "deviceScaleFactor": 1, "mobile": false}, nil)
}

func phone(t *testing.T, b *browser) {
	b.call(t, b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 400, "height": 860, "deviceScaleFactor": 1, "mobile": true}, nil)
}

// shotHeight is the most of a view a README picture shows: the ecosystem
// view's dense text gets less height, to keep its picture under 200 KB.
func shotHeight(view string, h float64) float64 {
	if view == "ecosystem" {
		return h * 0.7
	}
	return h
}

// shot saves a screenshot of a section, at most maxH CSS pixels of it.
func shot(t *testing.T, b *browser, id, path string, maxH float64) {
	t.Helper()
	var r struct{ X, Y, W, H float64 }
	// Scrolled into view and painted first: headless Chromium under mobile
	// emulation can capture blank areas beyond the viewport.
	b.eval(t, fmt.Sprintf(`(() => { document.activeElement.blur(); document.getElementById(%q).scrollIntoView();
		return new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => { const r = document.getElementById(%q).getBoundingClientRect();
		ok({X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height}); }))); })()`, id, id), &r)
	b.screenshotClip(t, r.X, r.Y, r.W, min(r.H, maxH), path)
}

// gate holds back the module until released, so the page stays in its
// loading state as long as the test needs.
type gate struct {
	h       http.Handler
	release chan struct{}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, ".wasm") {
		select {
		case <-g.release:
		case <-r.Context().Done():
			return
		}
	}
	g.h.ServeHTTP(w, r)
}

// testBeforeReady: while the module loads, the forms are disabled, and
// pressing Enter in the value field neither submits the form (a GET that
// reloads the page) nor loses the input. Once ready, the forms work.
func testBeforeReady(t *testing.T, b *browser) {
	g := &gate{h: Handler(), release: make(chan struct{})}
	srv := httptest.NewServer(g)
	defer srv.Close()
	released := false
	defer func() {
		if !released {
			close(g.release)
		}
	}()
	b.call(t, b.session, "Page.navigate", map[string]any{"url": srv.URL + "/"}, nil)
	b.waitFor(t, "the page's scripts to start", `document.readyState === "complete" && document.body.dataset.state === "loading"`, 30*time.Second)
	var st struct {
		Disabled []bool
		Copy     bool
		Busy     []string
	}
	const state = `({Disabled: Array.from(document.querySelectorAll("form fieldset"), f => f.disabled), Copy: document.getElementById("copy-link").disabled,
		Busy: Array.from(document.querySelectorAll("section .busy"), e => getComputedStyle(e).visibility)})`
	b.eval(t, state, &st)
	if len(st.Disabled) != 4 || !st.Copy {
		t.Errorf("while loading: fieldsets disabled %v, copy-link disabled %v; want 4 disabled forms and a disabled button", st.Disabled, st.Copy)
	}
	if strings.Join(st.Busy, " ") != "visible visible visible visible" {
		t.Errorf("while loading, the views' busy markers are %q, want all visible", st.Busy)
	}
	for _, d := range st.Disabled {
		if !d {
			t.Errorf("while loading, a form is enabled: %v", st.Disabled)
		}
	}
	// A person clicks the field and presses Enter.
	b.eval(t, `window.marker = "same page"; document.getElementById("value-input").focus()`, nil)
	for _, typ := range []string{"keyDown", "char", "keyUp"} {
		b.call(t, b.session, "Input.dispatchKeyEvent", map[string]any{"type": typ, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"}, nil)
	}
	time.Sleep(300 * time.Millisecond) // a reload, had it started, would have replaced the page by now
	var after struct{ Marker, Search, Value string }
	if err := b.tryEval(`({Marker: String(window.marker), Search: location.search, Value: document.getElementById("value-input").value})`, &after); err != nil {
		t.Fatalf("page gone after Enter: %v", err)
	}
	if after.Marker != "same page" || after.Search != "" || after.Value != "0.75" {
		t.Errorf("Enter before ready: marker %q, search %q, input %q; want the same page, no query, input 0.75", after.Marker, after.Search, after.Value)
	}
	close(g.release)
	released = true
	b.waitFor(t, "the page to be ready", `document.body.dataset.state === "ready"`, 90*time.Second)
	b.eval(t, state, &st)
	for _, d := range st.Disabled {
		if d || st.Copy {
			t.Errorf("ready, but a form or the copy-link button is still disabled: %v %v", st.Disabled, st.Copy)
		}
	}
	if strings.Join(st.Busy, " ") != "hidden hidden hidden hidden" {
		t.Errorf("ready, but the views' busy markers are %q, want all hidden", st.Busy)
	}
}

// testDecode: a code or a bit pattern in the value field shows its value
// (the reference's Decode), its fields and formula, and every profile's
// code for that value; bits, steps and neighbours are clickable.
func testDecode(t *testing.T, b *browser) {
	convs := unary.All()
	decoder := map[string]unary.Conversion{}
	for _, c := range convs {
		if _, ok := decoder[c.Format]; !ok {
			decoder[c.Format] = c
		}
	}
	cases := []struct {
		name, in, format string
		code             uint32
	}{
		{"E4M3 largest finite", "e4m3:0x7e", "e4m3", 0x7e},
		{"E4M3 NaN", "E4M3:0x7f", "e4m3", 0x7f},
		{"E2M1 binary 0111 is 6", "e2m1:0b0111", "e2m1", 7},
		{"E5M2 infinity", "e5m2:0x7c", "e5m2", 0x7c},
		{"E8M0 NaN", "e8m0:0xff", "e8m0", 0xff},
		{"E8M0 2^-127", "e8m0:0x00", "e8m0", 0},
		{"FP16 subnormal in decimal", "fp16:1", "fp16", 1},
		{"BF16 -2", "bf16:0xc000", "bf16", 0xc000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if st := submit(t, b, "value", "value-input", c.in); st != "ok" {
				t.Fatalf("status %q: %q", st, texts(t, b, "#value-error"))
			}
			v := decoder[c.format].Decode(c.code)
			bits := math.Float32bits(v)
			if got := texts(t, b, "#value-bits"); len(got) != 1 || got[0] != fmt.Sprintf("0x%08x", bits) {
				t.Errorf("%s decodes to float32 %q on the page, the reference's Decode gives 0x%08x (%v)", c.in, got, bits, v)
			}
			var shown map[string]string
			b.eval(t, `Object.fromEntries(Array.from(document.querySelectorAll("[data-conv]"), e => [e.dataset.conv, e.textContent]))`, &shown)
			for _, cv := range convs {
				if want := fmt.Sprintf("0x%0*x", (cv.Bits+3)/4, cv.Encode(v)); shown[cv.Name] != want {
					t.Errorf("%s of the decoded value: page %q, refimpl %s", cv.Name, shown[cv.Name], want)
				}
			}
			if c.format == "e4m3" && c.code == 0x7e {
				// The formula is written from E4M3's fields (bias 7).
				want := "sign 0, exponent 1111 = 15, mantissa 110 = 6: 2^(15 − 7) × 1.110₂ (1 + 6/8) = 448"
				if got := texts(t, b, "#code-head .formula"); len(got) != 1 || got[0] != want {
					t.Errorf("formula of e4m3:0x7e: %q, want %q", got, want)
				}
			}
		})
	}
	click := func(sel string) string {
		t.Helper()
		var seq int
		b.eval(t, fmt.Sprintf(`(() => { const n = Number(document.getElementById("value").dataset.seq); document.querySelector(%q).click(); return n; })()`, sel), &seq)
		if st := wait(t, b, "value", seq); st != "ok" {
			t.Fatalf("after clicking %s: status %q %q", sel, st, texts(t, b, "#value-error"))
		}
		var in string
		b.eval(t, `document.getElementById("value-input").value`, &in)
		return in
	}
	submit(t, b, "value", "value-input", "e4m3:0x7e")
	if in := click(`#code-head .bit[data-bit="0"]`); in != "e4m3:0x7f" {
		t.Errorf("flipping bit 0 of e4m3:0x7e gives input %q, want e4m3:0x7f", in)
	}
	if in := click("#code-next"); in != "e4m3:0x80" {
		t.Errorf("the step after e4m3:0x7f gives %q, want e4m3:0x80", in)
	}
	if in := click("#code-prev"); in != "e4m3:0x7f" {
		t.Errorf("the step before e4m3:0x80 gives %q, want e4m3:0x7f", in)
	}
	submit(t, b, "value", "value-input", "1")
	if in := click(`.f32bits .bit[data-bit="31"]`); in != "0xbf800000" {
		t.Errorf("flipping the float32 sign of 1 gives %q, want 0xbf800000", in)
	}
	if in := click("#f32-next"); in != "0xbf800001" {
		t.Errorf("the next pattern after 0xbf800000 is %q", in)
	}
	submit(t, b, "value", "value-input", "2.5")
	if in := click(`p.nb[data-format="e2m1"] .nb-above`); in != "e2m1:0x5" {
		t.Errorf("the E2M1 neighbour above 2.5 goes to %q, want e2m1:0x5 (3)", in)
	}
	if got := texts(t, b, "#code-value"); len(got) != 1 || got[0] != "3" {
		t.Errorf("e2m1:0x5 shows value %q, want 3", got)
	}
	// Live update: typing without submitting updates the view.
	var seq int
	b.eval(t, `(() => { const e = document.getElementById("value-input"); e.focus(); e.select(); return Number(document.getElementById("value").dataset.seq); })()`, &seq)
	b.call(t, b.session, "Input.insertText", map[string]any{"text": "0.5"}, nil)
	wait(t, b, "value", seq)
	if got := texts(t, b, "#value-bits"); len(got) != 1 || got[0] != "0x3f000000" {
		t.Errorf("typing 0.5 (no submit) shows %q, want 0x3f000000", got)
	}
	// Plain hex is float32 bits, the Unicode minus is a minus, and a hex
	// too long for a pattern gets a hint.
	for in, want := range map[string]uint32{"0x3f800000": 0x3f800000, "\u22121": 0xbf800000, "\u2212inf": 0xff800000} {
		if st := submit(t, b, "value", "value-input", in); st != "ok" {
			t.Errorf("%q: status %q %q", in, st, texts(t, b, "#value-error"))
			continue
		}
		if got := texts(t, b, "#value-bits"); len(got) != 1 || got[0] != fmt.Sprintf("0x%08x", want) {
			t.Errorf("%q reads as %q, want 0x%08x", in, got, want)
		}
	}
	for in, hint := range map[string]string{
		"0x3f8000001": "a float32 bit pattern has at most 8",
		"0x3f8g":      "float32 bits (0x3f800000) or a code (e4m3:0x7e",
		"e4m3:0x100":  "e4m3 codes have 8 bits",
		"e9m9:0x1":    `"e9m9" is not a format`,
	} {
		if st := submit(t, b, "value", "value-input", in); st != "error" {
			t.Errorf("%q: status %q, want error", in, st)
		} else if got := texts(t, b, "#value-error"); len(got) != 1 || !strings.Contains(got[0], hint) {
			t.Errorf("%q: message %q, want it to contain %q", in, got, hint)
		}
	}
}

// block32NonFinite is the block: NaN and both infinities among
// ordinary values.
var block32NonFinite = "nan inf -inf 1 0 " + func() string {
	var s []string
	for i := 1; i <= 27; i++ {
		s = append(s, strconv.Itoa(i))
	}
	return strings.Join(s, " ")
}()

// testBlockNonFinite: a block with NaN and ±Inf computes the reference's
// codes, draws a bar for each non-finite input (no console error: the
// test's final scan catches one), writes ±Inf as the rest of the page does,
// and gives the max/RMS error of both formats.
func testBlockNonFinite(t *testing.T, b *browser) {
	for _, recipe := range []string{"canonical", "torchao-0.17-cpu"} {
		t.Run(recipe, func(t *testing.T) {
			choose(t, b, "block", "nv-recipe", recipe)
			if st := submit(t, b, "block", "block-input", block32NonFinite); st != "ok" {
				t.Fatalf("status %q %q", st, texts(t, b, "#block-error"))
			}
			x := floats(t, block32NonFinite)
			xt := tensor.FromF32([]int{1, 32}, x)
			q := run(t, "nvfp4.quantize", ops.Params{"recipe": recipe}, ops.Tensors{"x": xt})
			codes := run(t, "e2m1.unpack", nil, ops.Tensors{"packed": q["packed"]})["codes"]
			y := run(t, "nvfp4.dequantize", ops.Params{"recipe": recipe}, q)["y"]
			equal(t, "NVFP4 codes", texts(t, b, ".nv-code"), hexCodes(codes.Data, 1))
			equal(t, "NVFP4 dequantized bits", attrs(t, b, ".nv-y", "data-bits"), bitsHex(y.Bits32()))
			mq := run(t, "mxfp4.quantize", ops.Params{"mode": "floor", "profile": "nvidia"}, ops.Tensors{"x": xt})
			my := run(t, "mxfp4.dequantize", nil, mq)["y"]
			equal(t, "MXFP4 dequantized bits", attrs(t, b, ".mx-y", "data-bits"), bitsHex(my.Bits32()))
			var r struct {
				Bars  int
				Text  string
				Stats map[string]string
			}
			b.eval(t, `({Bars: document.querySelectorAll("#block-out .plot .nonfinite").length, Text: document.getElementById("block-out").textContent,
				Stats: Object.fromEntries(Array.from(document.querySelectorAll("#block-stats td.stat"), e => [e.id, e.textContent]))})`, &r)
			if r.Bars != 3 {
				t.Errorf("%d bars for non-finite inputs, want 3 (NaN, +Inf, -Inf)", r.Bars)
			}
			if strings.Contains(r.Text, "Infinity") {
				t.Errorf("the block view writes Infinity; the page's spelling is ±Inf")
			}
			for _, s := range []struct {
				name string
				y    []float32
			}{{"nv", y.F32()}, {"mx", my.F32()}} {
				max, rms := blockErrors(x, s.y)
				for key, v := range map[string]float64{"max": max, "rms": rms} {
					got := r.Stats[s.name+"-"+key]
					if g, err := strconv.ParseFloat(got, 64); (math.IsNaN(v) && got != "—") || (!math.IsNaN(v) && (err != nil || g != round3(v))) {
						t.Errorf("%s %s error: page %q, the reference's outputs give %v", s.name, key, got, v)
					}
				}
			}
		})
	}
	choose(t, b, "block", "nv-recipe", "canonical")
}

// blockErrors is the largest |y - x| and the RMS of y - x over the
// elements where both are finite (NaN when there is none).
func blockErrors(x, y []float32) (max, rms float64) {
	n, ss := 0, 0.0
	for i := range x {
		a, b := float64(x[i]), float64(y[i])
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
			continue
		}
		d := math.Abs(b - a)
		max = math.Max(max, d)
		ss += d * d
		n++
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return max, math.Sqrt(ss / float64(n))
}

// round3 is v to 3 significant digits, as the page shows it.
func round3(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return r
}

// testCaps: an input far over a view's cap is refused at once with a
// message naming the cap, draws nothing, and the page keeps working.
func testCaps(t *testing.T, b *browser) {
	huge := strings.TrimSpace(strings.Repeat("1 ", 80000))
	for _, c := range []struct{ view, input, text, want string }{
		{"sp", "sp-input", huge, "at most 20000"},
		{"awq", "awq-input", huge, "at most 20000"},
		{"sp", "sp-input", strings.TrimSpace(strings.Repeat("1 ", 264)), "264 values: the 2:4 view takes at most 256"},
		{"awq", "awq-input", strings.TrimSpace(strings.Repeat("1 ", 520)), "520 values: the AWQ view (64 rows of 8) takes at most 512"},
		{"block", "block-input", strings.TrimSpace(strings.Repeat("1 ", 48)), "48 values: a block takes at most 32"},
		{"value", "value-input", strings.Repeat("1", 401), "at most 400 are read"},
	} {
		t.Run(fmt.Sprintf("%s %d", c.view, len(c.text)), func(t *testing.T) {
			if st := submit(t, b, c.view, c.input, c.text); st != "error" {
				t.Fatalf("status %q, want error", st)
			}
			if got := texts(t, b, "#"+c.view+"-error"); len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Errorf("message %q, want one containing %q", got, c.want)
			}
			var h int
			b.eval(t, `document.documentElement.scrollHeight`, &h)
			if h > 20000 {
				t.Errorf("page is %d px tall after a capped input", h)
			}
		})
	}
	if st := submit(t, b, "sp", "sp-input", sp24Default); st != "ok" {
		t.Errorf("after capped inputs the 2:4 view gives %q", st)
	}
	submit(t, b, "awq", "awq-input", awqDefault)
	submit(t, b, "block", "block-input", block32)
}

// testLongValue: a 390-digit value is read and does not widen the page.
func testLongValue(t *testing.T, b *browser, width int) {
	long := "0." + strings.Repeat("1234567890", 39)
	if st := submit(t, b, "value", "value-input", long); st != "ok" {
		t.Fatalf("status %q %q", st, texts(t, b, "#value-error"))
	}
	if got, want := texts(t, b, "#value-bits"), fmt.Sprintf("0x%08x", parse32(t, long)); len(got) != 1 || got[0] != want {
		t.Errorf("390 digits read as %q, want %s", got, want)
	}
	noOverflow(t, b, width)
}

// noOverflow: the document is no wider than the viewport, and no section,
// 2:4 cell or note is wider than its box.
func noOverflow(t *testing.T, b *browser, width int) {
	t.Helper()
	var r struct {
		Doc     int
		Wide    []string
		Clipped []string
	}
	b.eval(t, `(() => {
		const wide = Array.from(document.querySelectorAll("section, .cols > div, .scroll, .nibs, .groups"))
			.filter(e => e.scrollWidth > e.clientWidth + 1 && !e.classList.contains("scroll")).map(e => (e.id || e.className) + " " + e.scrollWidth + ">" + e.clientWidth);
		const scroll = Array.from(document.querySelectorAll(".scroll")).filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(e => "scroll box past the edge");
		// A number breaking inside ("52 7.05884") makes its cell taller
		// than one line.
		const broken = Array.from(document.querySelectorAll(".blocktab td, .valtab td.code, .valtab td.bits, .valtab td.val, .stats td")).filter(e => {
			const r = document.createRange();
			r.selectNodeContents(e);
			return r.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(e).lineHeight);
		}).map(e => "number broken over lines: " + e.textContent);
		const clipped = broken.concat(Array.from(document.querySelectorAll(".cell, .cell-x, .nib")).filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(e => e.className + ": " + e.textContent));
		return {Doc: document.documentElement.scrollWidth, Wide: wide.concat(scroll), Clipped: clipped};
	})()`, &r)
	if r.Doc > width {
		t.Errorf("the page is %d px wide in a %d px viewport", r.Doc, width)
	}
	if len(r.Wide) > 0 {
		t.Errorf("boxes overflow: %q", r.Wide)
	}
	if len(r.Clipped) > 0 {
		t.Errorf("cells clip or overflow their content: %q", r.Clipped)
	}
}

// setViews puts a telling input in each view (for screenshots).
func setViews(t *testing.T, b *browser) {
	submit(t, b, "value", "value-input", "2.5")
	submit(t, b, "block", "block-input", block32)
	choose(t, b, "awq", "awq-quantizer", "forge")
	submit(t, b, "awq", "awq-input", awqDefault)
	submit(t, b, "sp", "sp-input", sp24Default)
}

// testPhone: at 400 px nothing overflows in any view, on stress inputs
// (the NaN block, a 390-digit value, 2:4 notes from NaN and 1e-45),
// and on the defaults, which the phone screenshots show.
func testPhone(t *testing.T, b *browser, art string) {
	phone(t, b)
	t.Run("stress", func(t *testing.T) {
		testLongValue(t, b, 400)
		submit(t, b, "block", "block-input", block32NonFinite)
		submit(t, b, "sp", "sp-input", "nan 1e-45 -6 2  0.1 0.2 -0.3 0.4")
		if got := texts(t, b, ".cell-x"); len(got) == 0 {
			t.Errorf("no notes on rounded 2:4 values")
		}
		noOverflow(t, b, 400)
		var cols string
		b.eval(t, `getComputedStyle(document.querySelector("#block-out .cols")).gridTemplateColumns`, &cols)
		if strings.Count(cols, "px") != 1 {
			t.Errorf("NVFP4 and MXFP4 columns at 400 px: grid %q, want one column", cols)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		setViews(t, b)
		noOverflow(t, b, 400)
		for _, v := range []string{"value", "block", "awq", "sp", "ecosystem"} {
			shot(t, b, v, filepath.Join(art, "demo-phone-"+v+".png"), shotHeight(v, 1500))
		}
	})
}

// testURL: each view's input and options go into the URL; loading that URL
// in a fresh page restores them and shows the same results. The copy-link
// button gives that URL.
func testURL(t *testing.T, b *browser, base string) {
	submit(t, b, "value", "value-input", "-2.5")
	choose(t, b, "block", "nv-recipe", "vllm-model-exact-rcp")
	choose(t, b, "block", "mx-mode", "rceil")
	choose(t, b, "block", "mx-profile", "ml_dtypes")
	submit(t, b, "block", "block-input", block32NonFinite)
	choose(t, b, "awq", "awq-quantizer", "autoawq")
	submit(t, b, "awq", "awq-input", "0.5 -0.25 0.125 1 2 -3 0.75 0.01\n1 1 1 1 -1 -1 -1 -1")
	choose(t, b, "sp", "sp-tie", "signed")
	submit(t, b, "sp", "sp-input", "1 -1 1 -1  2 2 -2 0  0.5 0.5 0.5 0.5  3 -3 0 0")
	const snapshot = `({In: Object.fromEntries(["value-input", "block-input", "nv-recipe", "mx-mode", "mx-profile", "awq-input", "awq-quantizer", "sp-input", "sp-tie"].map(id => [id, document.getElementById(id).value])),
		Out: [["#value-bits"], [".nv-code"], [".mx-code"], [".awq-qweight"], [".sp-meta"], [".sp-kept"]].map(([s]) => Array.from(document.querySelectorAll(s), e => e.textContent).join(" "))})`
	type snap struct {
		In  map[string]string
		Out []string
	}
	var before, after snap
	b.eval(t, snapshot, &before)
	var href, copied string
	b.eval(t, `location.href`, &href)
	b.eval(t, `document.getElementById("copy-link").click(), new Promise(r => setTimeout(r, 200)).then(() => document.getElementById("copy-link").dataset.copied)`, &copied)
	if copied != href {
		t.Errorf("copy link gave %q, the page's URL is %q", copied, href)
	}
	for _, k := range []string{"v=-2.5", "nv=vllm-model-exact-rcp", "mx=rceil", "mxp=ml_dtypes", "q=autoawq", "tie=signed", "b=nan+inf", "w=", "s="} {
		if !strings.Contains(href, k) {
			t.Errorf("URL %s lacks %s", href, k)
		}
	}
	b.call(t, b.session, "Page.navigate", map[string]any{"url": "about:blank"}, nil)
	start := time.Now()
	b.call(t, b.session, "Page.navigate", map[string]any{"url": href}, nil)
	b.waitFor(t, "the shared page to be ready", `document.body && document.body.dataset.state === "ready"`, 90*time.Second)
	t.Logf("page with every view's state from the URL ready in %v", time.Since(start).Round(time.Millisecond))
	b.eval(t, snapshot, &after)
	for k, v := range before.In {
		if after.In[k] != v {
			t.Errorf("%s: %q before, %q restored from the URL", k, v, after.In[k])
		}
	}
	equal(t, "results before and after the round trip", after.Out, before.Out)
	// Back to the page's defaults for what follows.
	b.call(t, b.session, "Page.navigate", map[string]any{"url": base + "/"}, nil)
	b.waitFor(t, "the page to be ready", `document.body && document.body.dataset.state === "ready"`, 90*time.Second)
	var search string
	b.eval(t, `location.search`, &search)
	if search != "" {
		t.Errorf("defaults give a query %q, want none", search)
	}
}

// testStaticSite: the static build, served by a plain file server (no
// handler of this package), runs the same module and computes the same
// codes.
func testStaticSite(t *testing.T, b *browser) {
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := WriteSite(dir); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	t.Logf("static site (http.FileServer, loopback) ready in %v", loadTime(t, b, srv.URL+"/?v=480"))
	var digest string
	b.eval(t, `document.getElementById("digest").textContent`, &digest)
	if digest != wasm.ModuleDigest() {
		t.Errorf("static site runs a module with sha256 %s, want %s", digest, wasm.ModuleDigest())
	}
	var shown map[string]string
	b.eval(t, `Object.fromEntries(Array.from(document.querySelectorAll("[data-conv]"), e => [e.dataset.conv, e.textContent]))`, &shown)
	for _, cv := range unary.All() {
		if want := fmt.Sprintf("0x%0*x", (cv.Bits+3)/4, cv.Encode(480)); shown[cv.Name] != want {
			t.Errorf("static site, %s(480): %q, want %s", cv.Name, shown[cv.Name], want)
		}
	}
}

// loadTime loads url three times (from about:blank, the browser's cache
// as a returning visitor has it) and returns the median time until the
// page is ready: module fetched and compiled, every view computed. It is
// logged, not asserted (speed targets live in benchmarks).
func loadTime(t *testing.T, b *browser, url string) time.Duration {
	t.Helper()
	var d []time.Duration
	for range 3 {
		b.call(t, b.session, "Page.navigate", map[string]any{"url": "about:blank"}, nil)
		start := time.Now()
		b.call(t, b.session, "Page.navigate", map[string]any{"url": url}, nil)
		b.waitFor(t, "the page to load the module and run every view", `document.body && document.body.dataset.state === "ready"`, 90*time.Second)
		d = append(d, time.Since(start).Round(time.Millisecond))
	}
	slices.Sort(d)
	return d[1]
}
