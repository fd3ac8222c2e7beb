package demo

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	b.call(t, b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1240, "height": 1000, "deviceScaleFactor": 1, "mobile": false}, nil)
	start := time.Now()
	b.call(t, b.session, "Page.navigate", map[string]any{"url": srv.URL + "/"}, nil)
	b.waitFor(t, "the page to load the module and run every view", `document.body && document.body.dataset.state === "ready"`, 90*time.Second)
	t.Logf("page ready in %v", time.Since(start).Round(time.Millisecond))

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

	// The README's picture (docs/demo.png): the top of the page on a value
	// where profiles disagree.
	submit(t, b, "value", "value-input", "2.5")
	b.eval(t, `document.activeElement.blur(); window.scrollTo(0, 0)`, nil)
	b.screenshotClip(t, 0, 0, 1240, 940, filepath.Join(art, "demo-overview.png"))
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
		{"E4M3 overflow: satfinite 448, nosat NaN", "464"},
		{"float32 subnormal", "1e-40"},
		{"negative NaN", "-nan"},
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
		})
	}
}

// checkNeighbours compares the neighbour codes the page shows with the
// representable values of each format, from the reference's Decode: the
// largest value below x, the smallest above (the lowest code among equal
// values), and x's own code when x is representable.
func checkNeighbours(t *testing.T, b *browser, convs []unary.Conversion, x float32) {
	t.Helper()
	var shown map[string][3]string
	b.eval(t, `Object.fromEntries(Array.from(document.querySelectorAll("p.nb[data-format]"), p => [p.dataset.format,
		[".nb-below", ".nb-equal", ".nb-above"].map(s => { const e = p.querySelector(s); return e ? e.dataset.code : "-"; })]))`, &shown)
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
		want := [3]string{f(below, true), f(equal, equal >= 0), f(above, true)}
		if shown[cv.Format] != want {
			t.Errorf("%s neighbours of %v: page shows (below, equal, above) %q, the reference's Decode gives %q", cv.Format, x, shown[cv.Format], want)
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
		{"32 values, vllm-like recipe, rceil scale", block32, "vllm-like", "rceil", "ml_dtypes"},
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
