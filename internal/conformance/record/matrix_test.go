package record

import (
	"os"
	"testing"
)

// TestFirstDifference: where a record kept its first differences from the
// canonical profile and equals its nearest profile, the first input on
// which those two profiles differ (the link of a digest-only record) is
// the record's own first difference.
func TestFirstDifference(t *testing.T) {
	files, err := ReadAll(os.DirFS("../../../conformance/harness"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		u := f.Unary
		// With Inputs < 0 the run kept some chunks' outputs only, and
		// First need not be the first difference over all inputs.
		if u == nil || !u.Conforms() || u.Canonical == nil || u.Canonical.Inputs < 0 || len(u.Canonical.First) == 0 {
			continue
		}
		d, err := firstDifference(u.Nearest.Profile, u.Canonical.Profile)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if want := u.Canonical.First[0]; d == nil || *d != want {
			t.Errorf("%s: first difference of %s and %s is %+v, the record's %+v", f.Path, u.Nearest.Profile, u.Canonical.Profile, d, want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no record with first differences to check")
	}
	if d, err := firstDifference("e4m3/satfinite", "e4m3/satfinite"); err != nil || d != nil {
		t.Errorf("a profile against itself: %+v, %v; want no difference", d, err)
	}
	if _, err := firstDifference("e4m3/nope", "e4m3/satfinite"); err == nil {
		t.Error("an unknown profile: no error")
	}
}
