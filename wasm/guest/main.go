//go:build wasip1

// Command guest is the bitexact reference compiled to a WebAssembly
// reactor: every op registered in refimpl/ops and every conversion listed in
// refimpl/unary, behind a few exported functions. Package wasm embeds the
// result (refimpl.wasm) and runs it under wazero.
//
// Build it with `go generate ./wasm` or `make wasm`, which pass the exact
// flags (wasm/internal/guestbuild) that make the output byte-identical for a
// given Go toolchain.
//
// Memory protocol: the host never writes to guest memory the guest did not
// hand out. bitexact_alloc returns a buffer the guest keeps reachable until
// bitexact_free (or, for a request, until bitexact_run has consumed it).
// Buffers are looked up by address, so a host bug yields an error rather
// than memory corruption. Results are returned as (address<<32 | length)
// of a buffer the host must free.
package main

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/unary"
	"github.com/bitexact/bitexact/wasm/internal/abi"
)

func main() {}

// pinned holds every buffer handed to the host, by address. The Go garbage
// collector does not move objects, so an address stays valid while the
// buffer is referenced here.
var pinned = map[uint32][]byte{}

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func pin(b []byte) uint64 {
	if len(b) == 0 {
		b = make([]byte, 1)[:0:1] // a unique, valid address
	}
	a := addr(b)
	pinned[a] = b
	return uint64(a)<<32 | uint64(len(b))
}

//go:wasmexport bitexact_abi
func abiVersion() uint32 { return abi.Version }

// bitexact_alloc returns the address of a new n-byte buffer, or 0 when it
// cannot be allocated.
//
//go:wasmexport bitexact_alloc
func alloc(n uint32) (a uint32) {
	defer func() {
		if recover() != nil {
			a = 0
		}
	}()
	b := make([]byte, max(n, 1))[:n]
	return uint32(pin(b) >> 32)
}

//go:wasmexport bitexact_free
func free(a uint32) {
	delete(pinned, a)
	delete(retained, a)
}

// retained holds the outputs of a bitexact_call response, by the
// response's address, until the host frees it.
var retained = map[uint32]ops.Tensors{}

// reqBuf is the request buffer of bitexact_call, reused across calls. It
// is not pinned: the host writes into it only between bitexact_request
// and bitexact_call, and no call of the guest runs in between.
var reqBuf []byte

// keepSlack bounds the memory a reused request buffer may waste: a
// request of n bytes reuses a buffer of c bytes when n <= c <=
// max(2n, n+keepSlack); otherwise a new buffer is made (and the old one
// left to the collector), so that one large request does not hold its
// size through later small ones that may need the memory.
const keepSlack = 64 << 20

// bitexact_request returns the address of a request buffer of at least n
// bytes for bitexact_call, or 0 when it cannot be allocated. Its contents
// are unspecified (not zeroed): the host overwrites the n bytes it passes.
//
//go:wasmexport bitexact_request
func request(n uint32) (a uint32) {
	defer func() {
		if recover() != nil {
			reqBuf, a = nil, 0
		}
	}()
	if c := uint64(cap(reqBuf)); uint64(n) > c || c > max(2*uint64(n), uint64(n)+keepSlack) {
		reqBuf = nil // collectable before the new one is made
		reqBuf = make([]byte, max(n, 1))
	}
	reqBuf = reqBuf[:cap(reqBuf)]
	return addr(reqBuf)
}

// bitexact_call runs the n-byte request at the start of the request
// buffer and returns a response by reference, which the host must free
// (that releases the outputs). Op errors and panics come back as error
// responses.
//
//go:wasmexport bitexact_call
func call(n uint32) uint64 {
	var resp abi.Response
	if uint64(n) > uint64(len(reqBuf)) {
		resp.Err = fmt.Sprintf("bitexact_call: request of %d bytes exceeds the %d-byte request buffer", n, len(reqBuf))
	} else {
		resp = runRequest(reqBuf[:n])
	}
	b := make([]byte, abi.RefResponseSize(resp))
	if err := abi.EncodeRefResponse(b, resp, addr); err != nil {
		resp = abi.Response{Err: "encoding the response: " + err.Error()}
		b = make([]byte, abi.RefResponseSize(resp))
		_ = abi.EncodeRefResponse(b, resp, addr)
	}
	p := pin(b)
	if resp.Err == "" {
		retained[uint32(p>>32)] = resp.Outputs
	}
	return p
}

// bitexact_run decodes the n-byte request at address a (a buffer from
// bitexact_alloc, released here), runs the op and returns the encoded
// response. Op errors and panics come back as error responses.
//
//go:wasmexport bitexact_run
func run(a, n uint32) uint64 {
	req, ok := pinned[a]
	delete(pinned, a)
	var resp abi.Response
	if !ok || uint32(len(req)) != n {
		resp.Err = fmt.Sprintf("bitexact_run: no %d-byte buffer at %#x", n, a)
	} else {
		resp = runRequest(req)
	}
	b, err := abi.AppendResponse(resp)
	if err != nil {
		b, _ = abi.AppendResponse(abi.Response{Err: "encoding the response: " + err.Error()})
	}
	return pin(b)
}

func runRequest(b []byte) (resp abi.Response) {
	req, err := abi.DecodeRequest(b)
	if err != nil {
		return abi.Response{Err: err.Error()}
	}
	defer func() {
		if p := recover(); p != nil {
			resp = abi.Response{Err: fmt.Sprintf("op %s: panic in the reference: %v", req.Op, p)}
		}
	}()
	var out ops.Tensors
	if hook, ok := testHooks[req.Op]; ok {
		out, err = hook(req.Params, req.Inputs)
	} else {
		out, err = ops.Run(req.Op, req.Params, req.Inputs)
	}
	if err != nil {
		return abi.Response{Err: err.Error()}
	}
	return abi.Response{Outputs: out}
}

// testHooks are extra ops compiled in only with the build tag
// bitexact_wasmtest (hooks.go), for the host's failure-path tests.
var testHooks = map[string]func(ops.Params, ops.Tensors) (ops.Tensors, error){}

var conversions = map[string]unary.Conversion{}

// bitexact_unary runs unary.Lookup(name).EncodeRange(start, out) where the
// buffer at address a holds the name in its first nameLen bytes and out is
// its bytes [outOff, outOff+outLen). It returns 0 on success, else an error
// response the host must free.
//
//go:wasmexport bitexact_unary
func encodeRange(a, nameLen, start, outOff, outLen uint32) (ret uint64) {
	fail := func(format string, args ...any) uint64 {
		b, _ := abi.AppendResponse(abi.Response{Err: fmt.Sprintf(format, args...)})
		return pin(b)
	}
	buf, ok := pinned[a]
	if !ok || uint64(nameLen) > uint64(len(buf)) || uint64(outOff)+uint64(outLen) > uint64(len(buf)) || outOff < nameLen {
		return fail("bitexact_unary: bad buffer %#x (name %d bytes, output [%d,+%d))", a, nameLen, outOff, outLen)
	}
	c, ok := conversions[string(buf[:nameLen])] // no allocation when found
	name := c.Name
	if !ok {
		name = string(buf[:nameLen])
		var err error
		if c, err = unary.Lookup(name); err != nil {
			return fail("%v", err)
		}
		conversions[name] = c
	}
	defer func() {
		if p := recover(); p != nil {
			ret = fail("conversion %s: panic in the reference: %v", name, p)
		}
	}()
	c.EncodeRange(start, buf[outOff:outOff+outLen])
	return 0
}

// bitexact_names returns the registered op names, one per line.
//
//go:wasmexport bitexact_names
func names() uint64 { return pin([]byte(strings.Join(ops.Names(), "\n"))) }
