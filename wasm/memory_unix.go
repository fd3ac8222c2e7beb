//go:build unix

package wasm

import "syscall"

const canReserve = true

// reserve maps n bytes of address space with no access: no memory is
// committed (nor counted against the commit limit) until commit.
func reserve(n uint64) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
}

// commit makes b[from:to] readable and writable; the kernel supplies zero
// pages on first touch, as WebAssembly requires of grown memory.
func commit(b []byte, from, to int) error {
	const page = 64 << 10 // WebAssembly pages, a multiple of every OS page
	from &^= page - 1
	return syscall.Mprotect(b[from:to], syscall.PROT_READ|syscall.PROT_WRITE)
}

func unreserve(b []byte) { syscall.Munmap(b) }
