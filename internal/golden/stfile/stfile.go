// Package stfile reads and writes the safetensors files of golden sets,
// exports and results directories: deterministic bytes on write (a file
// regenerates byte-identically), and on read a strict parser that refuses
// every malformation with an error naming the file, never a panic.
//
// safetensors has no dtype for FP4, FP8 scales stored as bytes, E8M0 or
// llama.cpp blocks, so such tensors are stored as U8 and their logical
// format travels in __metadata__ under LogicalKeyPrefix+name; Encode and
// Decode move it to and from tensor.Tensor.Logical.
package stfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nlpodyssey/safetensors"

	"github.com/bitexact/bitexact/internal/golden/strictjson"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

// LogicalKeyPrefix prefixes the __metadata__ key that records a tensor's
// logical element format: a U8 tensor "codes" holding packed E2M1 pairs has
// "logical.codes": "e2m1x2". safetensors has no FP4 or E8M0 dtype, so the
// bytes are stored as U8 and the format travels beside them; Python readers
// see ordinary uint8 arrays plus a string they can check.
const LogicalKeyPrefix = "logical."

// Encode serialises named tensors and extra metadata. The bytes depend
// only on the arguments: the header is a JSON object with sorted keys
// (encoding/json sorts map keys), tensors are laid out by descending dtype
// alignment then name (the library's rule), and nothing else (no time, no
// host) enters, so regenerating a file is byte-identical.
func Encode(ts ops.Tensors, meta map[string]string) ([]byte, error) {
	md := make(map[string]string, len(meta)+len(ts))
	for k, v := range meta {
		if strings.HasPrefix(k, LogicalKeyPrefix) {
			return nil, fmt.Errorf("metadata key %q uses the reserved prefix %q", k, LogicalKeyPrefix)
		}
		md[k] = v
	}
	views := make(map[string]view, len(ts))
	for name, t := range ts {
		if name == "__metadata__" || name == "" {
			return nil, fmt.Errorf("tensor name %q is reserved", name)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		dt, err := safetensors.ParseDType(string(t.DType))
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		shape := make([]uint64, len(t.Shape)) // non-nil: a scalar's shape is [] not null
		for i, d := range t.Shape {
			shape[i] = uint64(d)
		}
		views[name] = view{dt, shape, t.Data}
		if t.Logical != "" {
			md[LogicalKeyPrefix+name] = t.Logical
		}
	}
	if len(md) == 0 {
		md = nil
	}
	return safetensors.Serialize(views, md)
}

// view is a safetensors.View. safetensors.NewTensorView is not used because
// it counts the elements of a scalar (shape []) as 0, not 1, and so rejects
// every scalar; Validate above has already checked the length.
type view struct {
	dt    safetensors.DType
	shape []uint64
	data  []byte
}

func (v view) DType() safetensors.DType { return v.dt }
func (v view) Shape() []uint64          { return v.shape }
func (v view) Data() []byte             { return v.data }
func (v view) DataLen() uint64          { return uint64(len(v.data)) }

// Decode parses a safetensors file into tensors (copies of the bytes) and
// its non-logical metadata. file names the file in errors. Any malformation
// (short or oversized header, bad JSON, a tensor name or metadata key given
// twice, offsets that do not tile the data, a dtype bitexact does not use,
// a logical-format key for a missing tensor) is an error naming the file
// and, where there is one, the tensor. It never panics, and recovers from
// no panic: FuzzDecode holds it to that.
func Decode(file string, b []byte) (ts ops.Tensors, meta map[string]string, err error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("%s: truncated safetensors: %d bytes, the header length alone takes 8", file, len(b))
	}
	n, header, err := safetensors.ReadMetadata(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: malformed safetensors: %w", file, err)
	}
	// The library decodes the header into a map, keeping the last of two
	// entries with the same name; a file that two readers could read as
	// different tensors is refused.
	if err := strictjson.CheckDuplicates(b[8 : 8+n]); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) && se.Path == "" {
			return nil, nil, fmt.Errorf("%s: malformed safetensors: header %s (a tensor name may appear once)", file, se.Problem)
		}
		return nil, nil, fmt.Errorf("%s: malformed safetensors: header: %w", file, err)
	}
	st, err := safetensors.Deserialize(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: malformed safetensors: %w", file, err)
	}
	ts = make(ops.Tensors, st.Len())
	for _, nv := range st.Tensors() {
		name := nv.Name
		v := nv.TensorView
		dt := tensor.DType(v.DType().String())
		if dt.Size() == 0 {
			return nil, nil, fmt.Errorf("%s: tensor %q: dtype %s is not used by bitexact", file, name, dt)
		}
		shape := make([]int, len(v.Shape()))
		n := uint64(1)
		for i, d := range v.Shape() {
			if d > 1<<40 {
				return nil, nil, fmt.Errorf("%s: tensor %q: dimension %d of shape %v is too large", file, name, i, v.Shape())
			}
			n *= d
			if n > 1<<40 {
				return nil, nil, fmt.Errorf("%s: tensor %q: shape %v is too large", file, name, v.Shape())
			}
			shape[i] = int(d)
		}
		t := tensor.Tensor{DType: dt, Shape: shape, Data: append([]byte{}, v.Data()...)}
		if err := t.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s: tensor %q: %w", file, name, err)
		}
		ts[name] = t
	}
	meta = map[string]string{}
	for k, v := range header.Metadata() {
		name, ok := strings.CutPrefix(k, LogicalKeyPrefix)
		if !ok {
			meta[k] = v
			continue
		}
		t, ok := ts[name]
		if !ok {
			return nil, nil, fmt.Errorf("%s: __metadata__ key %q names tensor %q, which the file does not hold", file, k, name)
		}
		t.Logical = v
		ts[name] = t
	}
	return ts, meta, nil
}
