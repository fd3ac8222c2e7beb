package abi

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func TestRequestRoundTrip(t *testing.T) {
	req := Request{
		Op:     "nvfp4.quantize",
		Params: ops.Params{"profile": "nvidia", "group": "16"},
		Inputs: ops.Tensors{
			"x":      tensor.FromF32([]int{2, 2}, []float32{1, -2, 0.5, 6}),
			"scales": {DType: tensor.U8, Shape: []int{1}, Logical: "e4m3", Data: []byte{0x38}},
			"empty":  {DType: tensor.U8, Shape: []int{0, 3}},
			"scalar": {DType: tensor.I32, Shape: []int{}, Data: []byte{1, 2, 3, 4}},
		},
	}
	b := make([]byte, RequestSize(req))
	if err := EncodeRequest(b, req); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Op != req.Op || len(got.Params) != 2 || got.Params["profile"] != "nvidia" || got.Params["group"] != "16" {
		t.Fatalf("op/params: got %q %v", got.Op, got.Params)
	}
	if len(got.Inputs) != len(req.Inputs) {
		t.Fatalf("got %d inputs, want %d", len(got.Inputs), len(req.Inputs))
	}
	for k, w := range req.Inputs {
		if g := got.Inputs[k]; !g.Equal(w) {
			t.Errorf("input %q: got %+v, want %+v", k, g, w)
		}
	}
}

// TestEncodingIsCanonical: map order must not reach the bytes, so equal
// requests encode identically (the encoding may be hashed).
func TestEncodingIsCanonical(t *testing.T) {
	mk := func() Request {
		p := ops.Params{}
		in := ops.Tensors{}
		for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			p[k] = k + k
			in[k] = tensor.FromU8([]int{1}, []byte{k[0]})
		}
		return Request{Op: "x.y", Params: p, Inputs: in}
	}
	var first []byte
	for i := 0; i < 20; i++ {
		r := mk()
		b := make([]byte, RequestSize(r))
		if err := EncodeRequest(b, r); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatal("two encodings of the same request differ")
		}
	}
}

// TestRequestLayout pins the wire format documented in the package
// comment, byte by byte.
func TestRequestLayout(t *testing.T) {
	req := Request{Op: "a.b", Params: ops.Params{"k": "v"}, Inputs: ops.Tensors{"x": {DType: tensor.U8, Shape: []int{2}, Logical: "e8m0", Data: []byte{7, 9}}}}
	var w bytes.Buffer
	str := func(s string) { binary.Write(&w, binary.LittleEndian, uint32(len(s))); w.WriteString(s) }
	w.WriteString("BXQ1")
	str("a.b")
	binary.Write(&w, binary.LittleEndian, uint32(1))
	str("k")
	str("v")
	binary.Write(&w, binary.LittleEndian, uint32(1))
	str("x")
	str("U8")
	str("e8m0")
	binary.Write(&w, binary.LittleEndian, uint32(1))
	binary.Write(&w, binary.LittleEndian, int64(2))
	binary.Write(&w, binary.LittleEndian, uint64(2))
	w.Write([]byte{7, 9})
	b := make([]byte, RequestSize(req))
	if err := EncodeRequest(b, req); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, w.Bytes()) {
		t.Fatalf("encoding\n%x\nwant\n%x", b, w.Bytes())
	}
}

func TestResponseRoundTrip(t *testing.T) {
	for _, r := range []Response{
		{Outputs: ops.Tensors{"codes": {DType: tensor.U8, Shape: []int{3}, Logical: "e2m1x2", Data: []byte{1, 2, 3}}}},
		{Outputs: ops.Tensors{}},
		{Err: `op fp8.encode: missing parameter "format"`},
	} {
		b, err := AppendResponse(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeResponse(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Err != r.Err || len(got.Outputs) != len(r.Outputs) {
			t.Fatalf("got %+v, want %+v", got, r)
		}
		for k, w := range r.Outputs {
			g := got.Outputs[k]
			if !g.Equal(w) {
				t.Fatalf("output %q: got %+v, want %+v", k, g, w)
			}
			if cap(g.Data) != len(g.Data) {
				t.Fatalf("output %q: Data capacity %d exceeds its length %d", k, cap(g.Data), len(g.Data))
			}
		}
	}
}

// fakeMemory stands in for guest memory in the reference encoding: addr
// appends a tensor's data at the next address, read copies it back.
type fakeMemory struct{ b []byte }

func (m *fakeMemory) addr(d []byte) uint32 {
	a := uint32(len(m.b))
	m.b = append(m.b, d...)
	return a
}

func (m *fakeMemory) read(a uint32, n uint64) ([]byte, bool) {
	if uint64(a)+n > uint64(len(m.b)) {
		return nil, false
	}
	return bytes.Clone(m.b[a : uint64(a)+n]), true
}

func TestRefResponseRoundTrip(t *testing.T) {
	for _, r := range []Response{
		{Outputs: ops.Tensors{
			"codes":  {DType: tensor.U8, Shape: []int{3}, Logical: "e2m1x2", Data: []byte{1, 2, 3}},
			"scales": {DType: tensor.U8, Shape: []int{2, 1}, Logical: "e4m3", Data: []byte{0x38, 0x40}},
			"empty":  {DType: tensor.F32, Shape: []int{0}},
		}},
		{Outputs: ops.Tensors{}},
		{Err: `op fp8.encode: missing parameter "format"`},
	} {
		mem := &fakeMemory{b: []byte{0xee}} // no data at address 0
		b := make([]byte, RefResponseSize(r))
		if err := EncodeRefResponse(b, r, mem.addr); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRefResponse(b, mem.read)
		if err != nil {
			t.Fatal(err)
		}
		if got.Err != r.Err || len(got.Outputs) != len(r.Outputs) {
			t.Fatalf("got %+v, want %+v", got, r)
		}
		for k, w := range r.Outputs {
			if g := got.Outputs[k]; !g.Equal(w) || (g.Data == nil) != (w.Data == nil) {
				t.Fatalf("output %q: got %+v, want %+v", k, g, w)
			}
		}
	}
}

// TestRefResponseLayout pins the reference encoding of one tensor: its
// data is an address and a length, not bytes.
func TestRefResponseLayout(t *testing.T) {
	r := Response{Outputs: ops.Tensors{"y": {DType: tensor.U8, Shape: []int{2}, Data: []byte{7, 9}}}}
	var w bytes.Buffer
	str := func(s string) { binary.Write(&w, binary.LittleEndian, uint32(len(s))); w.WriteString(s) }
	w.WriteString("BXR1")
	w.WriteByte(0)
	binary.Write(&w, binary.LittleEndian, uint32(1))
	str("y")
	str(string(tensor.U8))
	str("")
	binary.Write(&w, binary.LittleEndian, uint32(1))
	binary.Write(&w, binary.LittleEndian, int64(2))
	binary.Write(&w, binary.LittleEndian, uint32(0x1234))
	binary.Write(&w, binary.LittleEndian, uint64(2))
	b := make([]byte, RefResponseSize(r))
	if err := EncodeRefResponse(b, r, func([]byte) uint32 { return 0x1234 }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, w.Bytes()) {
		t.Fatalf("encoding\n got %x\nwant %x", b, w.Bytes())
	}
}

func TestRefResponseOutsideMemory(t *testing.T) {
	r := Response{Outputs: ops.Tensors{"y": tensor.FromU8([]int{4}, []byte{1, 2, 3, 4})}}
	b := make([]byte, RefResponseSize(r))
	if err := EncodeRefResponse(b, r, func([]byte) uint32 { return 0xfffffff0 }); err != nil {
		t.Fatal(err)
	}
	mem := &fakeMemory{b: make([]byte, 16)}
	_, err := DecodeRefResponse(b, mem.read)
	if want := `tensor "y": data [0xfffffff0,+4) is outside guest memory`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
	if _, err := DecodeRefResponse([]byte("BXS1\x00\x00\x00\x00\x00"), mem.read); err == nil || !strings.Contains(err.Error(), `missing magic "BXR1"`) {
		t.Fatalf("inline response read by reference: error %v", err)
	}
}

// TestNegativeDimensionPassesThrough: the guest's ops.Run must see the
// negative dimension to reject it with the native message.
func TestNegativeDimensionPassesThrough(t *testing.T) {
	req := Request{Op: "o", Inputs: ops.Tensors{"x": {DType: tensor.U8, Shape: []int{-1}}}}
	b := make([]byte, RequestSize(req))
	if err := EncodeRequest(b, req); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Inputs["x"].Shape; len(s) != 1 || s[0] != -1 {
		t.Fatalf("shape %v, want [-1]", s)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := func() []byte {
		req := Request{Op: "a.b", Params: ops.Params{"k": "v"}, Inputs: ops.Tensors{"x": tensor.FromU8([]int{2}, []byte{1, 2})}}
		b := make([]byte, RequestSize(req))
		EncodeRequest(b, req)
		return b
	}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, `missing magic "BXQ1"`},
		{"wrong magic", []byte("BXS1...."), `missing magic "BXQ1"`},
		{"truncated", good()[:len(good())-1], "tensor x data: truncated"},
		{"trailing", append(good(), 0), "1 trailing bytes"},
		{"huge string", append([]byte("BXQ1"), 0xff, 0xff, 0xff, 0xff), "op name: truncated"},
		{"huge param count", append([]byte("BXQ1\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0x0f), "parameter count 268435455 exceeds"},
		{"huge tensor count", append([]byte("BXQ1\x00\x00\x00\x00\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0x0f), "tensor count 268435455 exceeds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest(c.b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := DecodeResponse([]byte("BXS1\x07")); err == nil || !strings.Contains(err.Error(), "unknown status 7") {
		t.Fatalf("bad status: error %v", err)
	}
	if _, err := DecodeResponse([]byte("BXS1\x01\x00\x00\x00\x00")); err == nil || !strings.Contains(err.Error(), "empty message") {
		t.Fatalf("empty error message: error %v", err)
	}
}

// FuzzDecode: no input makes a decoder panic.
func FuzzDecode(f *testing.F) {
	req := Request{Op: "a.b", Params: ops.Params{"k": "v"}, Inputs: ops.Tensors{"x": tensor.FromU8([]int{2}, []byte{1, 2})}}
	b := make([]byte, RequestSize(req))
	EncodeRequest(b, req)
	f.Add(b)
	r, _ := AppendResponse(Response{Outputs: req.Inputs})
	f.Add(r)
	mem := &fakeMemory{b: make([]byte, 64)}
	rr := Response{Outputs: req.Inputs}
	r = make([]byte, RefResponseSize(rr))
	EncodeRefResponse(r, rr, mem.addr)
	f.Add(r)
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeRequest(b)
		DecodeResponse(b)
		DecodeRefResponse(b, mem.read)
	})
}
