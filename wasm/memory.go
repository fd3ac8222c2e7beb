package wasm

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs one instance's WebAssembly memory with a region
// reserved once at the size of the memory limit and committed as the guest
// grows it (reserve and commit are per platform: memory_unix.go). wazero's
// default keeps the memory in a Go slice and grows it with append, which
// copies the whole memory at every growth past its capacity and puts the
// guest's memory on the host's garbage-collected heap. Measured on
// nvfp4.quantize 1024x4096: growth copies were about 29% of a call, and
// the host GC, which cannot stop a goroutine running guest code, spun
// through the call (see docs/rationale/wasm.md). Here growth never moves
// or copies the memory, and the host heap does not see it.
//
// The region is released only when the instance is closed and no call is
// running on it: Runtime.Close may close an instance whose call is still
// in flight, and unmapping memory the guest (or a host view) is using
// would crash the process, so the release waits for the call to end.
type linearMemory struct {
	mu       sync.Mutex
	reserved []byte // the whole reservation, len = the memory limit
	size     int    // bytes committed and handed to wazero
	busy     bool   // a call is running on the instance
	freed    bool   // wazero released the memory; unmap when not busy
	// limit caps growth during the current call (enter), in bytes; the
	// memory already committed stays usable above it.
	limit uint64
}

// guestMemory is an instance's memory with a per-call growth limit.
type guestMemory interface {
	experimental.LinearMemory
	// enter and leave bracket a call; the guest may not grow its memory
	// past limit bytes during it.
	enter(limit uint64)
	leave()
}

// Reallocate implements experimental.LinearMemory.
func (m *linearMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed || size > uint64(len(m.reserved)) || (int(size) > m.size && size > m.limit) {
		return nil
	}
	if int(size) > m.size {
		if err := commit(m.reserved, m.size, int(size)); err != nil {
			return nil // wazero reports a failed memory.grow to the guest
		}
		m.size = int(size)
	}
	return m.reserved[:size:size]
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freed = true
	if !m.busy {
		m.release()
	}
}

// enter and leave bracket a call on the instance (see the type's doc).
func (m *linearMemory) enter(limit uint64) {
	m.mu.Lock()
	m.busy, m.limit = true, limit
	m.mu.Unlock()
}

func (m *linearMemory) leave() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.busy = false
	if m.freed {
		m.release()
	}
}

func (m *linearMemory) release() {
	if m.reserved != nil {
		unreserve(m.reserved)
		m.reserved = nil
	}
}

// memoryAllocator returns the allocator for one instance and a pointer
// that is set to its memory once wazero allocates it. The memory starts
// in a call (the guest's _initialize runs during instantiation) limited
// to initLimit bytes.
func memoryAllocator(initLimit uint64) (experimental.MemoryAllocator, *guestMemory) {
	p := new(guestMemory)
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		if canReserve {
			if b, err := reserve(max); err == nil {
				m := &linearMemory{reserved: b, busy: true, limit: initLimit}
				*p = m
				return m
			}
		}
		// Fall back to a plain slice that grows by copying, as wazero's
		// default does.
		s := &sliceMemory{max: max, limit: initLimit}
		*p = s
		return s
	}), p
}

// sliceMemory is the fallback where reservation is not possible.
type sliceMemory struct {
	mu    sync.Mutex
	b     []byte
	max   uint64
	limit uint64
}

func (s *sliceMemory) Reallocate(size uint64) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > s.max || (size > uint64(len(s.b)) && size > s.limit) {
		return nil
	}
	if size > uint64(cap(s.b)) {
		s.b = append(s.b[:cap(s.b)], make([]byte, size-uint64(cap(s.b)))...)
	}
	s.b = s.b[:size]
	return s.b
}

func (s *sliceMemory) Free() { s.b = nil }

func (s *sliceMemory) enter(limit uint64) {
	s.mu.Lock()
	s.limit = limit
	s.mu.Unlock()
}

func (s *sliceMemory) leave() {}
