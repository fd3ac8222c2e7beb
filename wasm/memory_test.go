package wasm

import "testing"

// TestLinearMemory checks the reservation behind guest memory: growth
// keeps the address and the contents, new memory reads zero, a request
// beyond the limit fails, and Free during a call waits for its end.
func TestLinearMemory(t *testing.T) {
	alloc, p := memoryAllocator()
	if alloc == nil {
		t.Skip("no reservation on this platform")
	}
	lm := alloc.Allocate(0, 4<<16)
	m := *p
	if m == nil {
		t.Skip("reservation failed; the slice fallback is in use")
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
