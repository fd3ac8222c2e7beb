package wasm

import "testing"

// TestLinearMemory checks the reservation behind guest memory: growth
// keeps the address and the contents, new memory reads zero, a request
// beyond the limit fails, and Free during a call waits for its end.
func TestLinearMemory(t *testing.T) {
	alloc, p := memoryAllocator(1 << 30)
	lm := alloc.Allocate(0, 4<<16)
	m, ok := (*p).(*linearMemory)
	if !ok {
		t.Skip("no reservation here; the slice fallback is in use")
	}
	a := lm.Reallocate(1 << 16)
	if len(a) != 1<<16 {
		t.Fatalf("Reallocate(64 KiB) gave %d bytes", len(a))
	}
	a[0], a[len(a)-1] = 7, 9
	b := lm.Reallocate(3 << 16)
	if len(b) != 3<<16 || &b[0] != &a[0] {
		t.Fatalf("growth moved or misjudged the memory: len %d", len(b))
	}
	if b[0] != 7 || b[1<<16-1] != 9 || b[1<<16] != 0 || b[len(b)-1] != 0 {
		t.Fatalf("growth changed the contents: %d %d %d %d", b[0], b[1<<16-1], b[1<<16], b[len(b)-1])
	}
	if lm.Reallocate(5<<16) != nil {
		t.Fatal("Reallocate beyond the reservation succeeded")
	}
	// m starts busy (as during instantiation): Free must not unmap.
	lm.Free()
	if m.reserved == nil {
		t.Fatal("Free unmapped memory in use")
	}
	b[0] = 1 // still mapped
	m.leave()
	if m.reserved != nil {
		t.Fatal("the memory was not released after the call ended")
	}
	if lm.Reallocate(1<<16) != nil {
		t.Fatal("Reallocate after Free succeeded")
	}
}

// TestCallLimitGrowth: during a call the memory grows only to the
// call's limit; memory committed before stays usable.
func TestCallLimitGrowth(t *testing.T) {
	alloc, p := memoryAllocator(2 << 16)
	lm := alloc.Allocate(0, 16<<16)
	if len(lm.Reallocate(2<<16)) != 2<<16 {
		t.Fatal("growth within the initial limit failed")
	}
	if lm.Reallocate(3<<16) != nil {
		t.Fatal("growth past the initial limit succeeded")
	}
	m := *p
	m.leave()
	m.enter(1 << 16) // a small call on an instance already grown
	if len(lm.Reallocate(2<<16)) != 2<<16 {
		t.Fatal("memory committed before the call is not usable")
	}
	if lm.Reallocate(3<<16) != nil {
		t.Fatal("growth past the call's limit succeeded")
	}
	m.leave()
	m.enter(8 << 16)
	if len(lm.Reallocate(8<<16)) != 8<<16 {
		t.Fatal("growth within a larger call's limit failed")
	}
	m.leave()
	lm.Free()
}

// TestCallLimitValues: the limit grows with the request and stops at the
// runtime's memory limit.
func TestCallLimitValues(t *testing.T) {
	r := &Runtime{opt: Options{MemoryLimitPages: DefaultMemoryLimitPages}}
	for _, tc := range []struct{ n, want uint64 }{
		{0, 64 << 20},
		{1 << 20, 112 << 20},
		{64 << 20, 64<<20 + 48*64<<20},
		{100 << 20, 4 << 30},
		{1 << 40, 4 << 30},
	} {
		if got := r.callLimit(tc.n); got != tc.want {
			t.Errorf("callLimit(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	r.opt.MemoryLimitPages = 512 // 32 MiB, less than callBase
	if got := r.callLimit(0); got != 32<<20 {
		t.Errorf("callLimit under a 32 MiB runtime limit = %d", got)
	}
}
