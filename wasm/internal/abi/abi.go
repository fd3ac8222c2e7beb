// Package abi is the binary request/response encoding shared by the wasm
// host (package wasm) and the guest (wasm/guest). It carries exactly what
// ops.Run takes and returns: an op name, string parameters and named tensors
// in; named tensors or an error message out.
//
// All integers are little-endian. A string is a uint32 byte length followed
// by the bytes. A tensor is
//
//	name, dtype, logical string
//	rank    uint32, then rank dimensions as int64
//	        (negative ones pass through, so that the guest's ops.Run
//	        rejects them with the same message as a native call)
//	length  uint64, then that many data bytes
//
// A request is the magic "BXQ1", the op name, a uint32 parameter count with
// (key, value) string pairs sorted by key, and a uint32 tensor count with
// tensors sorted by name. A response is the magic "BXS1" and a status byte:
// 0 followed by a tensor count and tensors (sorted by name), or 1 followed
// by an error message string.
//
// A reference response (magic "BXR1") is a response whose tensors carry,
// in place of their length and data bytes, the guest address (uint32) and
// length (uint64) of the data: the guest keeps its output tensors alive
// until the host has copied them, so output data crosses the boundary in
// one copy (guest tensor to host slice) instead of two (into a response
// buffer, then out of it).
//
// Sorting makes the encoding a function of the request's content, not of Go
// map iteration order, so equal requests encode to equal bytes.
//
// Decoders never panic: every length is checked against the remaining
// input, and malformed input is an error naming what is wrong.
package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// Version is the ABI version; the guest exports it and the host refuses a
// module that reports another one.
const Version = 1

const (
	requestMagic     = "BXQ1"
	responseMagic    = "BXS1"
	refResponseMagic = "BXR1"
	// maxRank bounds the rank a decoder accepts, so that a corrupt count
	// cannot request a huge allocation.
	maxRank = 64
)

// Request is one op invocation.
type Request struct {
	Op     string
	Params ops.Params
	Inputs ops.Tensors
}

// Response is an op's result: Outputs when Err is empty, else the error
// message.
type Response struct {
	Outputs ops.Tensors
	Err     string
}

// RequestSize is the exact encoded length of r.
func RequestSize(r Request) int {
	n := len(requestMagic) + strSize(r.Op) + 4
	for k, v := range r.Params {
		n += strSize(k) + strSize(v)
	}
	return n + tensorsSize(r.Inputs, false)
}

// EncodeRequest writes r into b, which must be RequestSize(r) bytes long.
func EncodeRequest(b []byte, r Request) error {
	if len(b) != RequestSize(r) {
		return fmt.Errorf("abi: request buffer is %d bytes, need %d", len(b), RequestSize(r))
	}
	w := writer{b: b}
	w.raw(requestMagic)
	w.str(r.Op)
	keys := sortedKeys(r.Params)
	w.u32(uint32(len(keys)))
	for _, k := range keys {
		w.str(k)
		w.str(r.Params[k])
	}
	w.tensors(r.Inputs)
	return nil
}

// DecodeRequest parses a request. Tensor data aliases b.
func DecodeRequest(b []byte) (Request, error) {
	rd := reader{b: b}
	if err := rd.magic(requestMagic); err != nil {
		return Request{}, err
	}
	var r Request
	r.Op = rd.str("op name")
	np := rd.u32("parameter count")
	if rd.err == nil && uint64(np)*8 > uint64(len(rd.b)) {
		rd.fail("parameter count %d exceeds the request size", np)
	}
	if rd.err == nil {
		r.Params = make(ops.Params, np)
	}
	for i := uint32(0); i < np && rd.err == nil; i++ {
		k := rd.str("parameter key")
		v := rd.str("parameter value")
		if _, dup := r.Params[k]; dup && rd.err == nil {
			rd.fail("duplicate parameter %q", k)
		}
		r.Params[k] = v
	}
	r.Inputs = rd.tensors()
	rd.end()
	if rd.err != nil {
		return Request{}, fmt.Errorf("abi: request: %w", rd.err)
	}
	return r, nil
}

// ResponseSize is the exact encoded length of r.
func ResponseSize(r Response) int { return responseSize(r, false) }

// RefResponseSize is the exact length of r encoded by reference.
func RefResponseSize(r Response) int { return responseSize(r, true) }

func responseSize(r Response, ref bool) int {
	n := len(responseMagic) + 1
	if r.Err != "" {
		return n + strSize(r.Err)
	}
	return n + tensorsSize(r.Outputs, ref)
}

// EncodeResponse writes r into b, which must be ResponseSize(r) bytes long.
func EncodeResponse(b []byte, r Response) error {
	return encodeResponse(b, r, responseMagic, nil)
}

// EncodeRefResponse writes r by reference into b, which must be
// RefResponseSize(r) bytes long; addr gives the guest address of a
// tensor's (non-empty) data. The caller must keep r.Outputs alive and
// unchanged until the host has read them.
func EncodeRefResponse(b []byte, r Response, addr func([]byte) uint32) error {
	return encodeResponse(b, r, refResponseMagic, addr)
}

func encodeResponse(b []byte, r Response, magic string, addr func([]byte) uint32) error {
	if n := responseSize(r, addr != nil); len(b) != n {
		return fmt.Errorf("abi: response buffer is %d bytes, need %d", len(b), n)
	}
	w := writer{b: b, addr: addr}
	w.raw(magic)
	if r.Err != "" {
		w.u8(1)
		w.str(r.Err)
		return nil
	}
	w.u8(0)
	w.tensors(r.Outputs)
	return nil
}

// AppendResponse is EncodeResponse into a new buffer.
func AppendResponse(r Response) ([]byte, error) {
	b := make([]byte, ResponseSize(r))
	return b, EncodeResponse(b, r)
}

// DecodeResponse parses a response. Tensor data aliases b, each tensor's
// Data capped at its own length so that appending to it cannot overwrite a
// neighbour.
func DecodeResponse(b []byte) (Response, error) {
	return decodeResponse(b, responseMagic, nil)
}

// DecodeRefResponse parses a response encoded by reference. data returns
// a copy of the n bytes at guest address a (n > 0), or false when they are
// outside guest memory.
func DecodeRefResponse(b []byte, data func(a uint32, n uint64) ([]byte, bool)) (Response, error) {
	return decodeResponse(b, refResponseMagic, data)
}

func decodeResponse(b []byte, magic string, data func(uint32, uint64) ([]byte, bool)) (Response, error) {
	rd := reader{b: b, data: data}
	if err := rd.magic(magic); err != nil {
		return Response{}, err
	}
	var r Response
	switch st := rd.u8("status"); {
	case rd.err != nil:
	case st == 0:
		r.Outputs = rd.tensors()
	case st == 1:
		r.Err = rd.str("error message")
		if rd.err == nil && r.Err == "" {
			rd.fail("error status with an empty message")
		}
	default:
		rd.fail("unknown status %d", st)
	}
	rd.end()
	if rd.err != nil {
		return Response{}, fmt.Errorf("abi: response: %w", rd.err)
	}
	return r, nil
}

func strSize(s string) int { return 4 + len(s) }

func tensorsSize(ts ops.Tensors, ref bool) int {
	n := 4
	for name, t := range ts {
		n += strSize(name) + strSize(string(t.DType)) + strSize(t.Logical) + 4 + 8*len(t.Shape) + 8
		if ref {
			n += 4
		} else {
			n += len(t.Data)
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// writer fills a buffer of the exact size. With addr set it writes tensor
// data by reference.
type writer struct {
	b    []byte
	o    int
	addr func([]byte) uint32
}

func (w *writer) raw(s string) { w.o += copy(w.b[w.o:], s) }
func (w *writer) u8(v uint8)   { w.b[w.o] = v; w.o++ }
func (w *writer) u32(v uint32) { binary.LittleEndian.PutUint32(w.b[w.o:], v); w.o += 4 }
func (w *writer) u64(v uint64) { binary.LittleEndian.PutUint64(w.b[w.o:], v); w.o += 8 }
func (w *writer) str(s string) { w.u32(uint32(len(s))); w.raw(s) }

func (w *writer) tensors(ts ops.Tensors) {
	names := sortedKeys(ts)
	w.u32(uint32(len(names)))
	for _, name := range names {
		t := ts[name]
		w.str(name)
		w.str(string(t.DType))
		w.str(t.Logical)
		w.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			w.u64(uint64(int64(d)))
		}
		if w.addr != nil {
			var a uint32
			if len(t.Data) > 0 {
				a = w.addr(t.Data)
			}
			w.u32(a)
			w.u64(uint64(len(t.Data)))
			continue
		}
		w.u64(uint64(len(t.Data)))
		w.o += copy(w.b[w.o:], t.Data)
	}
}

// reader keeps the first error and turns every later read into a no-op, so
// that decoding code reads straight through without checks after each
// field. With data set it reads tensor data by reference.
type reader struct {
	b    []byte
	err  error
	data func(uint32, uint64) ([]byte, bool)
}

var errShort = errors.New("truncated")

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, a...)
	}
}

func (r *reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%s: %w (need %d bytes, have %d)", what, errShort, n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) magic(m string) error {
	if len(r.b) < len(m) || string(r.b[:len(m)]) != m {
		return fmt.Errorf("abi: missing magic %q", m)
	}
	r.b = r.b[len(m):]
	return nil
}

func (r *reader) u8(what string) uint8 {
	if b := r.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if b := r.take(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if b := r.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) str(what string) string {
	n := r.u32(what + " length")
	return string(r.take(uint64(n), what))
}

func (r *reader) end() {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
}

func (r *reader) tensors() ops.Tensors {
	n := r.u32("tensor count")
	// Each tensor needs at least 24 bytes, which bounds a corrupt count.
	if r.err == nil && uint64(n)*24 > uint64(len(r.b)) {
		r.fail("tensor count %d exceeds the remaining %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return nil
	}
	ts := make(ops.Tensors, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.str("tensor name")
		var t tensor.Tensor
		t.DType = tensor.DType(r.str("tensor " + name + " dtype"))
		t.Logical = r.str("tensor " + name + " logical format")
		rank := r.u32("tensor " + name + " rank")
		if r.err == nil && rank > maxRank {
			r.fail("tensor %q: rank %d exceeds %d", name, rank, maxRank)
		}
		if r.err == nil {
			t.Shape = make([]int, rank)
		}
		for j := uint32(0); j < rank && r.err == nil; j++ {
			d := int64(r.u64("tensor " + name + " dimension"))
			if d > math.MaxInt32 || d < -math.MaxInt32 {
				r.fail("tensor %q: dimension %d is %d, beyond the limit %d", name, j, d, math.MaxInt32)
			}
			t.Shape[j] = int(d)
		}
		if r.data == nil {
			t.Data = r.take(r.u64("tensor "+name+" data length"), "tensor "+name+" data")
		} else if a, n := r.u32("tensor "+name+" data address"), r.u64("tensor "+name+" data length"); r.err == nil && n > 0 {
			var ok bool
			if t.Data, ok = r.data(a, n); !ok {
				r.fail("tensor %q: data [%#x,+%d) is outside guest memory", name, a, n)
			}
		}
		if r.err != nil {
			break
		}
		if len(t.Data) == 0 {
			t.Data = nil // as tensor.FromU8 and friends leave it
		}
		if _, dup := ts[name]; dup {
			r.fail("duplicate tensor %q", name)
		}
		ts[name] = t
	}
	return ts
}
