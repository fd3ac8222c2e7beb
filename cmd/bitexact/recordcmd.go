package main

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bitexact/bitexact/golden/exhaustive"
	"github.com/bitexact/bitexact/internal/conformance/record"
	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/internal/golden/strictjson"
)

const recordHelp = `
Record what a real implementation does (see internal/conformance/record and
conformance/harness/*/README.md).

Stream mode reads the codes of all 2^32 float32 inputs, in input order,
from stdin (--in), Width bytes each (1 for E2M1, FP8, E8M0; 2 little-endian
for FP16, BF16), hashes them into the exhaustive Merkle tree, compares
every chunk with every profile of --format, and writes a unary record
naming the nearest profile and its first differing inputs:

  sweep fp16 | bitexact record --format fp16 --harness ggml \
      --implementation "ggml d99724f" --function ggml_compute_fp32_to_fp16 \
      --build "gcc 12.2 -O3 x86-64" --command "..." --out FILE

Table mode (--table OP) reads one little-endian float32 per code instead
(256 for e8m0.decode) and writes a table record.

Import mode (--import sweep.json --chunks chunks.zip --root DIR) turns the
output of conformance/harness/device/sweep.py into one unary record per
conversion, DIR/<harness>/records/<id>.json.`

func runRecord(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("record", "record [flags]", recordHelp, stderr)
	var p record.Provenance
	format := fs.String("format", "", "code format of the streamed outputs ("+strings.Join(formatNames(), ", ")+")")
	table := fs.String("table", "", "record a table op instead (e8m0.decode)")
	in := fs.String("in", "-", "file of outputs (- for stdin)")
	out := fs.String("out", "", "record file to write")
	imp := fs.String("import", "", "sweep.json of conformance/harness/device/sweep.py")
	chunks := fs.String("chunks", "", "chunks.zip beside --import")
	root := fs.String("root", "conformance/harness", "harness folder for --import")
	fs.StringVar(&p.Harness, "harness", "", "harness folder name under conformance/harness")
	fs.StringVar(&p.Implementation, "implementation", "", "implementation and version or commit")
	fs.StringVar(&p.Function, "function", "", "function, instruction or expression run")
	fs.StringVar(&p.Build, "build", "", "compiler and flags, or device and driver")
	fs.StringVar(&p.Command, "command", "", "command that reproduces the record")
	fs.StringVar(&p.Date, "date", time.Now().UTC().Format("2006-01-02"), "date of the run")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "record", "unexpected argument %q", fs.Arg(0))
	}
	// encoding/json would write invalid UTF-8 as U+FFFD: refused before
	// any input is read.
	for _, f := range []struct{ name, v string }{{"harness", p.Harness}, {"implementation", p.Implementation},
		{"function", p.Function}, {"build", p.Build}, {"command", p.Command}, {"date", p.Date}} {
		if !utf8.ValidString(f.v) {
			return usageError(stderr, "record", "--%s %q is not valid UTF-8", f.name, f.v)
		}
	}
	if *imp != "" {
		if *chunks == "" {
			return usageError(stderr, "record", "--import needs --chunks")
		}
		if err := importSweep(*imp, *chunks, *root, stderr); err != nil {
			fmt.Fprintf(stderr, "bitexact record: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	if *out == "" {
		return usageError(stderr, "record", "name the record file (--out)")
	}
	if (*format == "") == (*table == "") {
		return usageError(stderr, "record", "give --format (stream mode) or --table, exactly one")
	}
	var r io.Reader = os.Stdin
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			fmt.Fprintf(stderr, "bitexact record: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		r = f
	}
	var v any
	var err error
	if *table != "" {
		v, err = readTable(r, *table, p)
	} else {
		v, err = streamUnary(ctx, r, *format, p, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bitexact record: %v\n", err)
		return exitUsage
	}
	if err := writeRecord(*out, v); err != nil {
		fmt.Fprintf(stderr, "bitexact record: %v\n", err)
		return exitUsage
	}
	if u, ok := v.(*record.Unary); ok {
		fmt.Fprintln(stdout, summary(u))
	} else {
		fmt.Fprintf(stdout, "%s: wrote %s\n", *table, *out)
	}
	return exitOK
}

func summary(u *record.Unary) string {
	s := fmt.Sprintf("%s %s: nearest %s, %d chunks and %d inputs differ", u.Harness, u.Function,
		u.Nearest.Profile, u.Nearest.Chunks, u.Nearest.Inputs)
	if len(u.Nearest.First) > 0 {
		d := u.Nearest.First[0]
		s += fmt.Sprintf(" (first %s: profile %s, got %s)", d.Input, d.Profile, d.Got)
	}
	return s
}

func writeRecord(path string, v any) error {
	b, err := record.Marshal(v)
	if err != nil {
		return err
	}
	return safeio.WriteFile(path, b, 0o644)
}

func streamUnary(ctx context.Context, r io.Reader, format string, p record.Provenance, stderr io.Writer) (*record.Unary, error) {
	a, err := record.NewAnalyzer(format)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, exhaustive.Chunk*a.Width())
	for i := 0; i < exhaustive.Leaves; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("chunk %d of %d: %w (want %d bytes a chunk)", i, exhaustive.Leaves, err, len(buf))
		}
		if err := a.Add(i, "", buf); err != nil {
			return nil, err
		}
		if i%32 == 31 {
			fmt.Fprintf(stderr, "record: %d/%d chunks\n", i+1, exhaustive.Leaves)
		}
	}
	if n, _ := r.Read(make([]byte, 1)); n > 0 {
		return nil, errors.New("more than 2^32 outputs on the input")
	}
	return a.Record(p)
}

// tableOps are the table records known, with their domain sizes.
var tableOps = map[string]int{"e8m0.decode": 256}

func readTable(r io.Reader, op string, p record.Provenance) (*record.Table, error) {
	n, ok := tableOps[op]
	if !ok {
		return nil, fmt.Errorf("unknown table op %q (known: e8m0.decode)", op)
	}
	b := make([]byte, 4*n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("%s: %w (want %d float32)", op, err, n)
	}
	t := &record.Table{Kind: "table", Provenance: p, Op: op}
	for i := 0; i < n; i++ {
		t.Outputs = append(t.Outputs, fmt.Sprintf("0x%08x", binary.LittleEndian.Uint32(b[4*i:])))
	}
	if _, err := record.Parse(mustJSON(t)); err != nil {
		return nil, err
	}
	return t, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// sweepFile is the output of conformance/harness/device/sweep.py.
type sweepFile struct {
	Provenance  map[string]any `json:"provenance"`
	Conversions []struct {
		ID             string   `json:"id"`
		Harness        string   `json:"harness"`
		Implementation string   `json:"implementation"`
		Function       string   `json:"function"`
		Format         string   `json:"format"`
		Width          int      `json:"width"`
		Candidates     []string `json:"candidates"`
		Leaves         []string `json:"leaves"`
		Stored         []int    `json:"stored_chunks"`
	} `json:"conversions"`
}

// Limits of the files --import reads. sweep.json holds 256 hex leaves
// per conversion (about 17 KiB each); chunks.zip holds the kept chunks,
// 14 MiB by default in sweep.py (--max-stored).
const (
	maxSweepBytes  = 64 << 20
	maxChunksBytes = 4 << 30
)

func importSweep(sweepPath, chunksPath, root string, stderr io.Writer) error {
	b, err := safeio.ReadFile(sweepPath, maxSweepBytes)
	if err != nil {
		return err
	}
	var s sweepFile
	if err := strictjson.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: %w", sweepPath, err)
	}
	z, closeZip, err := openChunks(chunksPath)
	if err != nil {
		return err
	}
	defer closeZip()
	files := map[string]*zip.File{}
	for _, f := range z.File {
		files[f.Name] = f
	}
	str := func(k string) string { v, _ := s.Provenance[k].(string); return v }
	if e, ok := s.Provenance["errors"].(map[string]any); ok && len(e) > 0 {
		return fmt.Errorf("%s: the sweep reported errors: %v", sweepPath, e)
	}
	date := str("date")
	if len(date) >= 10 {
		date = date[:10]
	}
	for _, c := range s.Conversions {
		a, err := record.NewAnalyzer(c.Format)
		if err != nil {
			return fmt.Errorf("%s: %w", c.ID, err)
		}
		if len(c.Leaves) != exhaustive.Leaves {
			return fmt.Errorf("%s: %d leaves, want %d", c.ID, len(c.Leaves), exhaustive.Leaves)
		}
		stored := map[int]bool{}
		for _, i := range c.Stored {
			stored[i] = true
		}
		for i, leaf := range c.Leaves {
			var out []byte
			if stored[i] {
				name := fmt.Sprintf("%s/%03d.zlib", c.ID, i)
				f, ok := files[name]
				if !ok {
					return fmt.Errorf("%s: %s lists chunk %d as kept but has no %s", c.ID, sweepPath, i, name)
				}
				if out, err = inflate(f, int64(a.Width())*exhaustive.Chunk); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			if err := a.Add(i, leaf, out); err != nil {
				return fmt.Errorf("%s: %w", c.ID, err)
			}
		}
		build := fmt.Sprintf("%s, driver %s, %s", str("gpu"), str("driver"), str("cpu"))
		switch c.Harness {
		case "ptx", "cuda":
			build = fmt.Sprintf("%s, driver %s; %s; nvcc %s", str("gpu"), str("driver"), str("nvcc"), str("nvcc_flags"))
		case "torch":
			build = fmt.Sprintf("torch %s (CUDA %s), %s, driver %s, %s", str("torch"), str("torch_cuda"), str("gpu"), str("driver"), strings.TrimSpace(str("cpu")))
		case "numpy", "mldtypes":
			build = fmt.Sprintf("Python %s, numpy %s, %s", str("python"), str("numpy"), strings.TrimSpace(str("cpu")))
		}
		impl := c.Implementation
		switch c.Harness {
		case "ptx":
			impl = fmt.Sprintf("PTX cvt on %s (sm_90, %s)", str("gpu"), cudaRelease(str("nvcc")))
		case "cuda":
			impl = fmt.Sprintf("CUDA headers (%s, sm_90) on %s", cudaRelease(str("nvcc")), str("gpu"))
		}
		p := record.Provenance{
			Harness: c.Harness, Implementation: impl, Function: c.Function, Build: build, Date: date,
			Command: "python3 conformance/harness/device/sweep.py --out OUT && " +
				"go run ./cmd/bitexact record --import OUT/sweep.json --chunks OUT/chunks.zip",
		}
		u, err := a.Record(p)
		if err != nil {
			return fmt.Errorf("%s: %w", c.ID, err)
		}
		path := filepath.Join(root, c.Harness, "records", c.ID+".json")
		if err := writeRecord(path, u); err != nil {
			return err
		}
		fmt.Fprintln(stderr, summary(u))
	}
	return nil
}

// cudaRelease picks "CUDA 13.0" out of nvcc --version's last lines.
func cudaRelease(nvcc string) string {
	if _, v, ok := strings.Cut(nvcc, "release "); ok {
		v, _, _ = strings.Cut(v, ",")
		return "CUDA " + v
	}
	return "CUDA"
}

// openChunks opens chunks.zip through safeio (a regular file of at most
// maxChunksBytes: never a named pipe or a device) and refuses a zip64
// directory, whose entry count the file's size alone does not bound
// (the entries are read into memory before any is used).
func openChunks(path string) (*zip.Reader, func(), error) {
	f, st, err := safeio.Open(path, maxChunksBytes)
	if err != nil {
		return nil, nil, err
	}
	if err := noZip64(f, st.Size()); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	z, err := zip.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return z, func() { f.Close() }, nil
}

// noZip64 finds the end-of-central-directory record (in the last 22 +
// 65535 bytes, its comment at most 65535) and refuses one whose fields
// are saturated, which sends a zip reader to a zip64 record: without it
// a directory holds at most 65535 entries.
func noZip64(r io.ReaderAt, size int64) error {
	const eocd = 22
	n := min(size, eocd+65535)
	if n < eocd {
		return errors.New("not a zip file (too short)")
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-n); err != nil {
		return err
	}
	i := bytes.LastIndex(buf[:n-eocd+4], []byte("PK\x05\x06"))
	if i < 0 {
		return errors.New("not a zip file (no end of central directory)")
	}
	d := buf[i:]
	if binary.LittleEndian.Uint16(d[8:]) == 0xffff || binary.LittleEndian.Uint16(d[10:]) == 0xffff ||
		binary.LittleEndian.Uint32(d[12:]) == 0xffffffff || binary.LittleEndian.Uint32(d[16:]) == 0xffffffff {
		return errors.New("a zip64 archive; chunks.zip is read only as a plain zip (at most 65535 entries)")
	}
	return nil
}

// inflate reads the zlib chunk f, which must decompress to at most want
// bytes: the decompressed size is limited while reading, so a chunk
// that inflates to gigabytes is refused after want+1 bytes.
func inflate(f *zip.File, want int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	zr, err := zlib.NewReader(rc)
	if err != nil {
		return nil, err
	}
	b, err := safeio.ReadLimited("decompressed", zr, want)
	if err != nil {
		return nil, err
	}
	return b, zr.Close()
}
