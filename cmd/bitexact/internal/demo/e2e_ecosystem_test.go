package demo

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bitexact/bitexact/internal/conformance/record"
	"github.com/bitexact/bitexact/refimpl/unary"
)

const harnessRoot = "../../../../conformance/harness"

// testEcosystem: the page opened at #ecosystem shows that view with one
// row per record (the records read here, not the page's JSON), and each
// unary row that differs from its format's canonical profile links to the
// value view on an input where the two disagree: the value view then
// shows the implementation's code under its profile and the canonical
// profile's code, as the record says.
func testEcosystem(t *testing.T, b *browser, base string) {
	files, err := record.ReadAll(os.DirFS(harnessRoot))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := record.ReadBlocks(harnessRoot)
	if err != nil {
		t.Fatal(err)
	}
	var unaries, tables, blockDirs []string
	byPath := map[string]*record.Unary{}
	for _, f := range files {
		switch {
		case f.Unary != nil:
			unaries = append(unaries, f.Path)
			byPath[f.Path] = f.Unary
		case f.Table != nil:
			tables = append(tables, f.Path)
		}
	}
	for _, bl := range blocks {
		blockDirs = append(blockDirs, bl.Dir)
	}
	if len(unaries) == 0 || len(tables) == 0 || len(blocks) == 0 {
		t.Fatalf("records: %d unary, %d table, %d block; want some of each", len(unaries), len(tables), len(blocks))
	}

	b.call(t, b.session, "Page.navigate", map[string]any{"url": base + "/#ecosystem"}, nil)
	b.waitFor(t, "the page to be ready", `document.body && document.body.dataset.state === "ready"`, 90*time.Second)
	var st struct {
		Status string
		Top    float64
	}
	b.eval(t, `({Status: document.getElementById("ecosystem").dataset.status, Top: document.getElementById("ecosystem").getBoundingClientRect().top})`, &st)
	if st.Status != "ok" {
		t.Fatalf("ecosystem view: status %q, error %q", st.Status, texts(t, b, "#ecosystem-error"))
	}
	if math.Abs(st.Top) > 2 {
		t.Errorf("opened at #ecosystem, the view's top is at %v px, want it scrolled to the top", st.Top)
	}
	rows := func(id string) []string {
		var out []string
		b.eval(t, fmt.Sprintf(`Array.from(document.querySelectorAll("#%s tbody tr"), r => r.dataset.record)`, id), &out)
		slices.Sort(out)
		return out
	}
	slices.Sort(unaries)
	slices.Sort(tables)
	slices.Sort(blockDirs)
	equal(t, "unary rows", rows("eco-unary"), unaries)
	equal(t, "table rows", rows("eco-tables"), tables)
	equal(t, "block rows", rows("eco-blocks"), blockDirs)

	type link struct{ Record, Input, Profile, Got, Canonical, Want, Href string }
	var links []link
	b.eval(t, `Array.from(document.querySelectorAll("#eco-unary tbody tr"), r => { const a = r.querySelector("a.eco-link");
		return a ? {Record: r.dataset.record, Input: a.dataset.input, Profile: a.dataset.profile || "", Got: a.dataset.got,
			Canonical: a.dataset.canonical, Want: a.dataset.want, Href: a.getAttribute("href")} : {Record: r.dataset.record}; })`, &links)
	linked := 0
	for _, l := range links {
		u := byPath[l.Record]
		differs := u.Canonical != nil || !u.Conforms()
		if (l.Input != "") != differs {
			t.Errorf("%s: link %q; the record differs from the canonical profile: %v", l.Record, l.Input, differs)
			continue
		}
		if !differs {
			continue
		}
		linked++
		// What the record says on that input.
		want := record.Diff{Input: l.Input}
		canonical := u.Nearest.Profile
		if u.Canonical != nil {
			canonical = u.Canonical.Profile
		}
		switch {
		case u.Canonical != nil && len(u.Canonical.First) > 0:
			want = u.Canonical.First[0]
		case !u.Conforms():
			want = u.Nearest.First[0]
		default:
			// The record kept chunk digests only, and equals its nearest
			// profile on all 2^32 inputs (TestUnaryRecords): its code on
			// the input is that profile's.
			x := parseBits(t, l.Input)
			want.Got = code(t, u.Nearest.Profile, x)
			want.Profile = code(t, canonical, x)
		}
		if l.Input != want.Input || num(t, l.Got) != num(t, want.Got) || num(t, l.Want) != num(t, want.Profile) || l.Canonical != canonical {
			t.Errorf("%s: link %+v; the record says %+v against %s", l.Record, l, want, canonical)
			continue
		}
		if !strings.Contains(l.Href, "v="+l.Input) || !strings.HasSuffix(l.Href, "#value") {
			t.Errorf("%s: href %q, want ?v=%s#value", l.Record, l.Href, l.Input)
		}
		var seq int
		b.eval(t, `Number(document.getElementById("value").dataset.seq || 0)`, &seq)
		b.eval(t, fmt.Sprintf(`document.querySelector('#eco-unary tr[data-record=%q] a.eco-link').click()`, l.Record), nil)
		if st := wait(t, b, "value", seq); st != "ok" {
			t.Fatalf("%s: the value view gives %q for %s", l.Record, st, l.Input)
		}
		var shown struct {
			Bits, Hash, Search string
			Codes              map[string]string
		}
		b.eval(t, `({Bits: document.getElementById("value-bits").textContent, Hash: location.hash, Search: location.search,
			Codes: Object.fromEntries(Array.from(document.querySelectorAll("[data-conv]"), e => [e.dataset.conv, e.textContent]))})`, &shown)
		if shown.Bits != l.Input || shown.Hash != "#value" || !strings.Contains(shown.Search, "v="+l.Input) {
			t.Errorf("%s: the link shows %s at %s%s, want %s at ?v=%s#value", l.Record, shown.Bits, shown.Search, shown.Hash, l.Input, l.Input)
		}
		if num(t, shown.Codes[canonical]) != num(t, want.Profile) {
			t.Errorf("%s: on %s the value view shows %s = %s, the record says %s", l.Record, l.Input, canonical, shown.Codes[canonical], want.Profile)
		}
		if u.Conforms() {
			p := u.Nearest.Profile
			if num(t, shown.Codes[p]) != num(t, want.Got) || shown.Codes[p] == shown.Codes[canonical] {
				t.Errorf("%s: on %s the value view shows %s = %s and %s = %s; the record says the implementation (%s) gives %s, not %s",
					l.Record, l.Input, p, shown.Codes[p], canonical, shown.Codes[canonical], p, want.Got, want.Profile)
			}
		}
	}
	if linked == 0 {
		t.Error("no unary row links to the value view")
	}
	t.Logf("%d unary, %d table, %d block rows; %d links followed", len(unaries), len(tables), len(blocks), linked)
}

func parseBits(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return uint32(v)
}

func num(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	if err != nil {
		t.Errorf("%q is not a hex code: %v", s, err)
	}
	return v
}

func code(t *testing.T, conv string, x uint32) string {
	t.Helper()
	for _, c := range unary.All() {
		if c.Name == conv {
			return fmt.Sprintf("0x%x", c.Encode(math.Float32frombits(x)))
		}
	}
	t.Fatalf("no conversion %s", conv)
	return ""
}
