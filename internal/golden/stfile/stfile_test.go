package stfile

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func sampleTensors() ops.Tensors {
	codes := tensor.FromU8([]int{2, 3}, []uint8{0x21, 0x43, 0x65, 0x87, 0xa9, 0xcb})
	codes.Logical = "e2m1x2"
	return ops.Tensors{
		"x":     tensor.FromF32([]int{4}, []float32{1, -0.5, 6, 0.25}),
		"codes": codes,
		"s":     tensor.FromI32([]int{}, []int32{-7}),
	}
}

func TestRoundTrip(t *testing.T) {
	ts := sampleTensors()
	b, err := Encode(ts, map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := Encode(sampleTensors(), map[string]string{"k": "v"})
	if !bytes.Equal(b, b2) {
		t.Fatal("two encodings of the same tensors differ")
	}
	// The header is the JSON the format defines: sorted keys, the logical
	// format in __metadata__, a scalar's shape as [] (not null).
	n := binary.LittleEndian.Uint64(b)
	hdr := string(b[8 : 8+n])
	for _, want := range []string{`"__metadata__":{"k":"v","logical.codes":"e2m1x2"}`, `"s":{"dtype":"I32","shape":[],`} {
		if !strings.Contains(hdr, want) {
			t.Errorf("header %s lacks %s", hdr, want)
		}
	}
	got, meta, err := Decode("f.safetensors", b)
	if err != nil {
		t.Fatal(err)
	}
	if meta["k"] != "v" || len(meta) != 1 {
		t.Errorf("metadata = %v, want map[k:v]", meta)
	}
	if len(got) != len(ts) {
		t.Errorf("round trip: %d tensors, want %d", len(got), len(ts))
	}
	for n, x := range ts {
		if !x.Equal(got[n]) {
			t.Errorf("round trip: tensor %q = %+v, want %+v", n, got[n], x)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   ops.Tensors
		meta map[string]string
		want string
	}{
		{"bad length", ops.Tensors{"a": {DType: tensor.F32, Shape: []int{2}, Data: make([]byte, 7)}}, nil, `tensor "a": shape [2] of F32 needs 8 bytes, have 7`},
		{"reserved prefix", ops.Tensors{}, map[string]string{"logical.a": "x"}, `reserved prefix`},
		{"reserved name", ops.Tensors{"__metadata__": tensor.FromU8([]int{1}, []uint8{1})}, nil, `reserved`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Encode(tc.ts, tc.meta)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func header(h string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(b, h...)
}

func TestDecodeMalformed(t *testing.T) {
	good, err := Encode(sampleTensors(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "f.st: truncated safetensors: 0 bytes"},
		{"short", good[:5], "f.st: truncated safetensors: 5 bytes"},
		{"header past end", good[:40], "f.st: malformed safetensors: invalid header length"},
		{"data truncated", good[:len(good)-1], "f.st: malformed safetensors: metadata incomplete buffer"},
		{"trailing byte", append(append([]byte{}, good...), 0), "f.st: malformed safetensors: metadata incomplete buffer"},
		{"huge header", binary.LittleEndian.AppendUint64(nil, 1<<40), "header too large"},
		{"not json", header("{nope"), "invalid header deserialization"},
		{"bad dtype", header(`{"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}}`), `invalid DType string value "Q9"`},
		{"unused dtype", append(header(`{"a":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}}`), 1), `f.st: tensor "a": dtype BOOL is not used by bitexact`},
		{"shape vs offsets", append(header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`), 0, 0, 0, 0), "info data offsets mismatch"},
		{"gap", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`), 0, 0), `invalid metadata offset for tensor "a"`},
		{"duplicate tensor name", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 7),
			`f.st: malformed safetensors: header key "a" appears twice (a tensor name may appear once)`},
		{"duplicate metadata key", append(header(`{"__metadata__":{"k":"1","k":"2"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 7),
			`f.st: malformed safetensors: header: __metadata__: key "k" appears twice`},
		{"negative shape", header(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`), "natural numbers"},
		{"wrapping offsets", header(`{"a":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,18446744073709551615]}}`), "f.st:"},
		{"logical for missing tensor", append(header(`{"__metadata__":{"logical.b":"e4m3"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 7), `f.st: __metadata__ key "logical.b" names tensor "b"`},
		{"non-string metadata", header(`{"__metadata__":{"k":1}}`), `__metadata__ "k"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Decode("f.st", tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Every truncation and every single-byte corruption of a valid file either
// decodes or fails with an error naming the file: never a panic.
func TestDecodeFuzzish(t *testing.T) {
	good, err := Encode(sampleTensors(), map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(b []byte, what string) {
		t.Helper()
		_, _, err := Decode("g.st", b)
		if err != nil && !strings.HasPrefix(err.Error(), "g.st") {
			t.Fatalf("%s: error %q does not name the file", what, err)
		}
	}
	for n := 0; n < len(good); n++ {
		if _, _, err := Decode("g.st", good[:n]); err == nil {
			t.Fatalf("truncation to %d of %d bytes decoded without error", n, len(good))
		}
		check(good[:n], "truncation")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(good); i++ {
		for _, v := range []byte{0, 0xff, byte(r.Uint32()), good[i] ^ 1} {
			b := append([]byte{}, good...)
			b[i] = v
			check(b, "corruption")
		}
	}
}

// FuzzDecode: any input decodes or fails with an error naming
// the file, never panics (Decode recovers nothing, so a panic
// fails the target), and what decodes re-encodes to a file that decodes
// to the same tensors.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(sampleTensors(), map[string]string{"k": "v"})
	f.Add(good)
	f.Add(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`))
	f.Add(append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 7))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, meta, err := Decode("z.st", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "z.st") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		re, err := Encode(ts, meta)
		if err != nil {
			return // e.g. a non-logical metadata key with the reserved prefix cannot occur; names the encoder reserves can
		}
		ts2, _, err := Decode("z.st", re)
		if err != nil {
			t.Fatalf("re-encoded file does not decode: %v", err)
		}
		if len(ts2) != len(ts) {
			t.Fatalf("re-encoding changed the tensor count: %d -> %d", len(ts), len(ts2))
		}
		for n, x := range ts {
			y := ts2[n]
			if x.DType != y.DType || !x.Equal(y) {
				t.Fatalf("tensor %q changed in a round trip", n)
			}
		}
	})
}
