package golden

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bitexact/bitexact/internal/golden/stfile"
	"github.com/bitexact/bitexact/refimpl/ops"
	"github.com/bitexact/bitexact/refimpl/tensor"
)

func TestBuildDeterministic(t *testing.T) {
	ctx := context.Background()
	a, err := Build(ctx, Native{}, &Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(ctx, Native{}, &Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Data) != len(b.Data) {
		t.Fatalf("%d files, then %d", len(a.Data), len(b.Data))
	}
	for p, x := range a.Data {
		if !bytes.Equal(x, b.Data[p]) {
			t.Errorf("%s differs between two builds", p)
		}
	}
}

// The committed set is what the native reference computes, file for file.
// (TestWasmCrossCheck compares wasm to both.)
func TestCommittedSetNative(t *testing.T) {
	if err := Verify(context.Background(), Native{}, DataFS(), nil); err != nil {
		t.Fatalf("golden/data is not what the native reference generates: %v\n(regenerate with: go run ./cmd/bitexact golden gen)", err)
	}
}

func TestCommittedSetSize(t *testing.T) {
	total := 0
	fs.WalkDir(DataFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			total += int(info.Size())
		}
		return nil
	})
	// 32 MiB: the set must stay small enough to embed in the binary and
	// to travel with a checkout; it holds a case per (task, profile) the
	// suites name, and grows with the profiles real implementations need
	// (records under conformance/harness) and the edge inputs that
	// separate them.
	const limit = 32 << 20
	if total > limit {
		t.Errorf("golden/data holds %d bytes, over the %d-byte budget", total, limit)
	}
	t.Logf("golden/data: %d bytes", total)
}

// copyFS copies the embedded set into a mutable map.
func copyFS(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(DataFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(DataFS(), p)
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// firstCase picks the first case of the committed set and the offset of
// its first output tensor's data in its file.
func firstCase(t *testing.T, m fstest.MapFS) (CaseFile, string, int, int) {
	t.Helper()
	s, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Manifest.Cases[0]
	b := m[c.File].Data
	ts, _, err := stfile.Decode(c.File, b)
	if err != nil {
		t.Fatal(err)
	}
	name := sortedNames(ts)[0]
	off := bytes.LastIndex(b, ts[name].Data) // data sits at the end of the file
	return c, name, off, ts[name].DType.Size()
}

func TestVerifyNamesDifference(t *testing.T) {
	ctx := context.Background()
	m := copyFS(t)
	c, tensor, off, size := firstCase(t, m)
	m[c.File].Data[off+3*size] ^= 0x01
	err := Verify(ctx, Native{}, m, nil)
	var d *DiffError
	if !errors.As(err, &d) {
		t.Fatalf("Verify after a flipped bit = %v, want a *DiffError", err)
	}
	if d.File != c.File || d.Tensor != tensor || !strings.Contains(d.Problem, "1 of ") || !strings.Contains(d.Problem, "flat index 3") {
		t.Errorf("DiffError = %+v, want file %s tensor %s, 1 element, flat index 3", d, c.File, tensor)
	}

	m = copyFS(t)
	m["expected/zz-stale.safetensors"] = &fstest.MapFile{Data: []byte("x")}
	if err := Verify(ctx, Native{}, m, nil); !errors.As(err, &d) || d.File != "expected/zz-stale.safetensors" {
		t.Errorf("Verify with a stale file = %v", err)
	}

	m = copyFS(t)
	delete(m, c.File)
	if err := Verify(ctx, Native{}, m, nil); !errors.As(err, &d) || d.File != c.File || !strings.Contains(d.Problem, "missing") {
		t.Errorf("Verify with a missing file = %v", err)
	}
}

func TestLoadChecksDigests(t *testing.T) {
	m := copyFS(t)
	c, _, off, _ := firstCase(t, m)
	m[c.File].Data[off] ^= 0x80
	_, err := Load(m)
	if err == nil || !strings.Contains(err.Error(), c.File+": SHA-256") {
		t.Errorf("Load of a tampered set = %v, want a SHA-256 error naming %s", err, c.File)
	}
	m = copyFS(t)
	m[ManifestFile].Data = bytes.Replace(m[ManifestFile].Data, []byte(`"schema": 1`), []byte(`"schema": 99`), 1)
	if _, err := Load(m); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("Load with schema 99 = %v", err)
	}
	m = copyFS(t)
	m[ManifestFile].Data = m[ManifestFile].Data[:100]
	if _, err := Load(m); err == nil || !strings.Contains(err.Error(), "manifest.json: malformed") {
		t.Errorf("Load with a truncated manifest = %v", err)
	}
}

// corrupt is an engine that flips the low bit of one output element.
type corrupt struct {
	Native
	op  string
	idx int
}

func (c corrupt) Run(ctx context.Context, op string, p ops.Params, in ops.Tensors) (ops.Tensors, error) {
	out, err := c.Native.Run(ctx, op, p, in)
	if err != nil || op != c.op {
		return out, err
	}
	for _, n := range sortedNames(out) {
		t := out[n]
		t.Data = append([]byte{}, t.Data...)
		t.Data[c.idx*t.DType.Size()] ^= 1
		out[n] = t
		break
	}
	return out, nil
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(ctx, Native{}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(s.Manifest.Cases) {
		t.Fatalf("%d results for %d cases", len(res), len(s.Manifest.Cases))
	}
	for _, r := range res {
		if !r.OK() {
			t.Errorf("native %s: %v %+v", r.Case.Name, r.Err, r.Diffs)
		}
	}
	op := s.Manifest.Cases[0].Op
	res, err = Check(ctx, corrupt{op: op, idx: 5}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, r := range res {
		if r.Case.Op != op {
			if !r.OK() {
				t.Errorf("%s failed, but only %s was corrupted", r.Case.Name, op)
			}
			continue
		}
		bad++
		if r.OK() || len(r.Diffs) != 1 || r.Diffs[0].First != 5 || r.Diffs[0].Count != 1 {
			t.Errorf("%s: diffs %+v, want one tensor with element 5 differing", r.Case.Name, r.Diffs)
		}
	}
	if bad == 0 {
		t.Errorf("no case of op %s checked", op)
	}
}

func TestDiffTensorsShapes(t *testing.T) {
	sample := func() ops.Tensors {
		return ops.Tensors{"x": tensor.FromF32([]int{4}, []float32{1, -0.5, 6, 0.25}), "s": tensor.FromI32([]int{}, []int32{-7})}
	}
	a := sample()
	b := sample()
	x := b["x"]
	x.Shape = []int{2, 2}
	b["x"] = x
	delete(b, "s")
	d := DiffTensors(a, b)
	if len(d) != 2 || d[0].Tensor != "s" || d[0].Problem != "missing from the output" || d[1].Tensor != "x" || d[1].Problem != "shape [2 2], want [4]" {
		t.Errorf("DiffTensors = %+v", d)
	}
}
