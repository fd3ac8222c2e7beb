package suite

import (
	"testing"

	"github.com/bitexact/bitexact/refimpl/ops"
)

// TestDefaultsAreTheOps: a suite's Defaults are its op's own defaults
// (refimpl/ops Op.Defaults), so that a case leaving a profile key out is
// named by the value the reference computed it with.
func TestDefaultsAreTheOps(t *testing.T) {
	n := 0
	for _, s := range Specs() {
		op, err := ops.Lookup(s.Op)
		if err != nil {
			t.Fatalf("suite %s: %v", s.Name, err)
		}
		for k, v := range s.Defaults {
			n++
			if def, ok := op.Default(k); !ok || def != v {
				t.Errorf("suite %s: default %s=%s, op %s defaults it to %q (%v)", s.Name, k, v, s.Op, def, ok)
			}
		}
	}
	if n == 0 {
		t.Fatal("no suite defaults")
	}
}
