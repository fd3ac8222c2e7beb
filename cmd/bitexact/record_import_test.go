package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bitexact/bitexact/golden/exhaustive"
)

// sweepJSON is a sweep.json of one e4m3 conversion that keeps chunk 0.
func sweepJSON(t *testing.T, dir string) string {
	t.Helper()
	leaves := make([]string, exhaustive.Leaves)
	for i := range leaves {
		leaves[i] = strings.Repeat("0", 64)
	}
	s := map[string]any{
		"provenance": map[string]any{"date": "2026-01-01"},
		"conversions": []map[string]any{{"id": "x", "harness": "h", "implementation": "i", "function": "f",
			"format": "e4m3", "width": 1, "candidates": []string{}, "leaves": leaves, "stored_chunks": []int{0}}},
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// zlibZeros is a zlib stream of n MiB of zero bytes, built without
// compressing them all: after the first MiB, deflating another MiB of
// zeros over a window of zeros gives the same flushed block each time.
// Its Adler-32 is not written: a reader that stops at its limit never
// gets there.
func zlibZeros(t *testing.T, n int) []byte {
	t.Helper()
	mib := make([]byte, 1<<20)
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(mib)
	w.Flush()
	first := append([]byte(nil), buf.Bytes()...)
	buf.Reset()
	w.Write(mib)
	w.Flush()
	next := append([]byte(nil), buf.Bytes()...)
	buf.Reset()
	w.Write(mib)
	w.Flush()
	if !bytes.Equal(buf.Bytes(), next) {
		t.Fatal("deflate of zeros does not repeat: the stream cannot be built this way")
	}
	out := append([]byte{0x78, 0xda}, first...) // zlib header, best compression
	for range n - 1 {
		out = append(out, next...)
	}
	return out
}

// chunksZip writes a zip holding entries name -> data, stored.
func chunksZip(t *testing.T, dir string, entries map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "chunks.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// importWithin runs record --import and fails (instead of hanging the
// suite) when it has not returned within a minute; it then opens the
// named pipes it was given for writing, so the blocked read ends.
func importWithin(t *testing.T, sweep, chunks string, fifos ...string) (int, string) {
	t.Helper()
	type res struct {
		code   int
		stderr string
	}
	done := make(chan res, 1)
	go func() {
		code, _, e := bitexact(t, "record", "--import", sweep, "--chunks", chunks, "--root", t.TempDir())
		done <- res{code, e}
	}()
	select {
	case r := <-done:
		return r.code, r.stderr
	case <-time.After(time.Minute):
		for _, f := range fifos {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		t.Fatalf("record --import %s --chunks %s blocked", sweep, chunks)
		return 0, ""
	}
}

// TestRecordImportLimits: --import reads sweep.json and chunks.zip
// through safeio (regular files of bounded size, never blocking on a
// named pipe) and limits each chunk's decompressed size while reading.
func TestRecordImportLimits(t *testing.T) {
	dir := t.TempDir()
	sweep := sweepJSON(t, dir)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, exhaustive.Chunk))
	zw.Close()
	good := chunksZip(t, t.TempDir(), map[string][]byte{"x/000.zlib": z.Bytes()})
	fifo := filepath.Join(dir, "fifo")
	hasFifo := runtime.GOOS != "windows" && mkfifo(fifo) == nil
	// A directory whose EOCD record sends the reader to a zip64 record,
	// where the entry count is bounded by nothing but the file size.
	zb, _ := os.ReadFile(good)
	zip64 := append([]byte(nil), zb...)
	e := bytes.LastIndex(zip64, []byte("PK\x05\x06"))
	binary.LittleEndian.PutUint16(zip64[e+8:], 0xffff)
	binary.LittleEndian.PutUint16(zip64[e+10:], 0xffff)
	zip64Path := writeFile(t, t.TempDir(), "chunks.zip", zip64)
	bomb := func(mib int) string {
		return chunksZip(t, t.TempDir(), map[string][]byte{"x/000.zlib": zlibZeros(t, mib)})
	}
	for _, tc := range []struct {
		name          string
		sweep, chunks string
		fifo          bool
		want          string
	}{
		{"sweep.json a named pipe", fifo, good, true, "fifo: a named pipe (FIFO), not a regular file"},
		{"chunks.zip a named pipe", sweep, fifo, true, "fifo: a named pipe (FIFO), not a regular file"},
		{"sweep.json /dev/zero", "/dev/zero", good, false, "/dev/zero: a character device, not a regular file"},
		{"chunks.zip /dev/zero", sweep, "/dev/zero", false, "/dev/zero: a character device, not a regular file"},
		{"a chunk of 17 MiB", sweep, bomb(17), false, "x/000.zlib: decompressed: more than the 16777216 bytes it may hold"},
		{"a chunk of 4 GiB", sweep, bomb(4096), false, "x/000.zlib: decompressed: more than the 16777216 bytes it may hold"},
		{"chunks.zip with a zip64 directory", sweep, zip64Path, false, "a zip64 archive; chunks.zip is read only as a plain zip"},
		{"sweep.json with invalid UTF-8", writeFile(t, dir, "bad.json", []byte("{\"provenance\":{\"gpu\":\"a\xffb\"},\"conversions\":[]}")), good, false,
			"invalid UTF-8"},
		{"sweep.json with a duplicate key", writeFile(t, dir, "dup.json", []byte(`{"provenance":{},"conversions":[],"conversions":[]}`)), good, false,
			`key "conversions" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fifo && !hasFifo {
				t.Skip("no named pipes")
			}
			if strings.HasPrefix(tc.sweep+tc.chunks, "/dev/zero") || strings.Contains(tc.chunks, "/dev/zero") {
				if _, err := os.Stat("/dev/zero"); err != nil {
					t.Skip("no /dev/zero")
				}
			}
			code, stderr := importWithin(t, tc.sweep, tc.chunks, fifo)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	// The well-formed zip gets as far as comparing the chunk with its leaf.
	code, stderr := importWithin(t, sweep, good)
	if code != exitUsage || !strings.Contains(stderr, "chunk 0: outputs hash to") {
		t.Fatalf("well-formed import: exit %d, stderr %q; want the leaf mismatch", code, stderr)
	}
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
