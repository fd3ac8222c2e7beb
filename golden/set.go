package golden

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/bitexact/bitexact/internal/golden/catalog"
	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/internal/golden/stfile"
	"github.com/bitexact/bitexact/internal/golden/strictjson"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// Options tune Build, Verify and Check.
type Options struct {
	// Workers bounds the cases run at once; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Progress, if set, is called after each file is produced, from one
	// goroutine at a time.
	Progress func(done, total int, file string)
	// Generator overrides the manifest's generator field (default:
	// EngineName(engine)).
	Generator string
}

// Files is a golden set in memory: every file's bytes by slash-separated
// path, manifest.json included.
type Files struct {
	Manifest Manifest
	Data     map[string][]byte
}

// names returns the file paths, sorted.
func (f *Files) names() []string {
	n := make([]string, 0, len(f.Data))
	for k := range f.Data {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Size is the total number of bytes of all files.
func (f *Files) Size() int {
	s := 0
	for _, b := range f.Data {
		s += len(b)
	}
	return s
}

func inputPath(name string) string    { return "inputs/" + name + ".safetensors" }
func expectedPath(name string) string { return "expected/" + name + ".safetensors" }

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func infos(ts ops.Tensors) []TensorInfo {
	var v []TensorInfo
	for _, n := range sortedNames(ts) {
		t := ts[n]
		shape := append([]int{}, t.Shape...)
		v = append(v, TensorInfo{Name: n, DType: string(t.DType), Logical: t.Logical, Shape: shape})
	}
	return v
}

// Build generates the golden set of the case catalogue (internal/golden/catalog,
// its registered ops only) in memory: inputs on the
// host from their seeds, expected outputs through e.
func Build(ctx context.Context, e Engine, opt *Options) (*Files, error) {
	if opt == nil {
		opt = &Options{}
	}
	if err := catalog.Validate(); err != nil {
		return nil, err
	}
	ins, cases := catalog.Registered()
	f := &Files{Data: map[string][]byte{}}
	gen := opt.Generator
	if gen == "" {
		gen = EngineName(e)
	}
	f.Manifest = Manifest{Schema: SchemaVersion, Suite: SuiteVersion, Generator: gen, PRNG: "splitmix64"}

	total := len(ins) + len(cases)
	var mu sync.Mutex
	done := 0
	progress := func(file string) {
		mu.Lock()
		defer mu.Unlock()
		done++
		if opt.Progress != nil {
			opt.Progress(done, total, file)
		}
	}

	inputs := make(map[string]ops.Tensors, len(ins))
	f.Manifest.Inputs = make([]InputFile, len(ins))
	for i, in := range ins {
		ts, err := in.Make(in.Seed)
		if err != nil {
			return nil, fmt.Errorf("input set %s: %w", in.Name, err)
		}
		b, err := stfile.Encode(ts, map[string]string{"bitexact.suite": SuiteVersion, "bitexact.inputs": in.Name})
		if err != nil {
			return nil, fmt.Errorf("input set %s: %w", in.Name, err)
		}
		p := inputPath(in.Name)
		f.Data[p] = b
		inputs[in.Name] = ts
		f.Manifest.Inputs[i] = InputFile{Name: in.Name, Description: in.Description, Seed: in.Seed,
			File: p, SHA256: digest(b), Bytes: len(b), Tensors: infos(ts)}
		progress(p)
	}

	f.Manifest.Cases = make([]CaseFile, len(cases))
	errs := make([]error, len(cases))
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				errs[i] = err
				return
			}
			out, err := e.Run(ctx, c.Op, c.Params, inputs[c.Inputs])
			if err != nil {
				errs[i] = fmt.Errorf("case %s: %w", c.Name, err)
				return
			}
			b, err := stfile.Encode(out, map[string]string{"bitexact.suite": SuiteVersion, "bitexact.case": c.Name, "bitexact.op": c.Op})
			if err != nil {
				errs[i] = fmt.Errorf("case %s: output: %w", c.Name, err)
				return
			}
			p := expectedPath(c.Name)
			params := map[string]string{}
			for k, v := range c.Params {
				params[k] = v
			}
			mu.Lock()
			f.Data[p] = b
			mu.Unlock()
			f.Manifest.Cases[i] = CaseFile{Name: c.Name, Family: c.Family, Op: c.Op, Params: params,
				Description: c.Description, Inputs: c.Inputs, File: p, SHA256: digest(b), Bytes: len(b), Outputs: infos(out)}
			progress(p)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	mb, err := json.MarshalIndent(f.Manifest, "", "  ")
	if err != nil {
		return nil, err
	}
	f.Data[ManifestFile] = append(mb, '\n')
	return f, nil
}

// WriteDir writes the files under dir, removing stale .safetensors files
// from dir/inputs and dir/expected so that the directory holds exactly the
// set.
//
// Files are written through internal/golden/safeio: each replaces a regular
// file, never writes through a symbolic link, and a stale file is
// removed only after every file of the set was written, so a failed
// write loses nothing.
func (f *Files) WriteDir(dir string) error {
	d, err := safeio.OpenOutDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for _, p := range f.names() {
		if err := d.WriteFile(p, f.Data[p], 0o644); err != nil {
			return err
		}
	}
	for _, sub := range []string{"inputs", "expected"} {
		ents, err := d.ReadDir(sub)
		if err != nil {
			return err
		}
		for _, en := range ents {
			p := sub + "/" + en.Name()
			if _, keep := f.Data[p]; !keep && strings.HasSuffix(en.Name(), ".safetensors") {
				if err := d.Remove(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// DiffError reports the first difference between a committed golden set
// and a regenerated one.
type DiffError struct {
	File    string // path inside the set
	Tensor  string // empty when the difference is not inside one tensor
	Problem string
}

func (e *DiffError) Error() string {
	if e.Tensor != "" {
		return fmt.Sprintf("%s: tensor %q: %s", e.File, e.Tensor, e.Problem)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Problem)
}

// Verify regenerates the golden set through e in memory and requires every
// file of fsys (a golden set directory) to be byte-identical to it. The
// first difference is returned as a *DiffError naming the file and, inside
// safetensors files, the tensor and element. When e cannot describe its
// module (Native), the committed generator field is taken as given: the
// native engine can attest outputs, not the digest of a module it did not
// run. opt may be nil.
func Verify(ctx context.Context, e Engine, fsys fs.FS, opt *Options) error {
	mb, err := fs.ReadFile(fsys, ManifestFile)
	if err != nil {
		return fmt.Errorf("%s: %w", ManifestFile, err)
	}
	var committed Manifest
	if err := json.Unmarshal(mb, &committed); err != nil {
		return &DiffError{File: ManifestFile, Problem: "malformed JSON: " + err.Error()}
	}
	o := Options{}
	if opt != nil {
		o = *opt
	}
	if _, ok := e.(describer); !ok && o.Generator == "" {
		o.Generator = committed.Generator
	}
	f, err := Build(ctx, e, &o)
	if err != nil {
		return err
	}
	return f.compare(fsys)
}

// compare requires fsys to hold exactly f's files (manifest.json, inputs/
// and expected/ .safetensors files), byte for byte.
func (f *Files) compare(fsys fs.FS) error {
	var have []string
	for _, sub := range []string{"inputs", "expected"} {
		ents, err := fs.ReadDir(fsys, sub)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, en := range ents {
			if strings.HasSuffix(en.Name(), ".safetensors") {
				have = append(have, sub+"/"+en.Name())
			}
		}
	}
	for _, p := range have {
		if _, ok := f.Data[p]; !ok {
			return &DiffError{File: p, Problem: "not part of the regenerated set (stale file or changed catalog)"}
		}
	}
	// Data files first: a manifest difference is usually a consequence.
	names := f.names()
	sort.SliceStable(names, func(i, j int) bool { return names[i] != ManifestFile && names[j] == ManifestFile })
	for _, p := range names {
		want := f.Data[p]
		got, err := fs.ReadFile(fsys, p)
		if err != nil {
			return &DiffError{File: p, Problem: "missing from the committed set: " + err.Error()}
		}
		if bytes.Equal(got, want) {
			continue
		}
		if p == ManifestFile {
			return manifestDiff(got, want)
		}
		return diffSafetensors(p, got, want)
	}
	return nil
}

// manifestDiff explains why the committed manifest (got) differs from the
// regenerated one (want), most telling difference first: a recorded file
// digest (the manifest no longer describes its files), then any other
// line, and the generator last. A generator difference alone means the
// reference module changed while every file came out byte-identical: the
// set is stale only in the module it names, which certificates record.
func manifestDiff(got, want []byte) error {
	var g, w Manifest
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return &DiffError{File: ManifestFile, Problem: firstLineDiff(got, want)}
	}
	recorded := map[string]string{}
	for _, in := range g.Inputs {
		recorded[in.File] = in.SHA256
	}
	for _, c := range g.Cases {
		recorded[c.File] = c.SHA256
	}
	var files [][2]string // file, regenerated digest, in manifest order
	for _, in := range w.Inputs {
		files = append(files, [2]string{in.File, in.SHA256})
	}
	for _, c := range w.Cases {
		files = append(files, [2]string{c.File, c.SHA256})
	}
	for _, f := range files {
		if d, ok := recorded[f[0]]; ok && d != f[1] {
			return &DiffError{File: ManifestFile, Problem: fmt.Sprintf("digest mismatch: %s is recorded with SHA-256 %s, the regenerated file's is %s", f[0], d, f[1])}
		}
	}
	if g.Generator != w.Generator {
		// Compare the rest with the generator line made equal.
		same := bytes.Replace(got, []byte(`"generator": `+strconv.Quote(g.Generator)), []byte(`"generator": `+strconv.Quote(w.Generator)), 1)
		if !bytes.Equal(same, want) {
			return &DiffError{File: ManifestFile, Problem: firstLineDiff(same, want)}
		}
		return &DiffError{File: ManifestFile, Problem: fmt.Sprintf("generator mismatch: the manifest names %q, this build's reference is %q; every file is byte-identical, so only the manifest is stale (regenerate with `bitexact golden gen` and commit)", g.Generator, w.Generator)}
	}
	return &DiffError{File: ManifestFile, Problem: firstLineDiff(got, want)}
}

func firstLineDiff(got, want []byte) string {
	g := strings.Split(string(got), "\n")
	w := strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d differs: committed %q, regenerated %q", i+1, strings.TrimSpace(a), strings.TrimSpace(b))
		}
	}
	return "differs"
}

// diffSafetensors explains why two safetensors files differ.
func diffSafetensors(file string, got, want []byte) error {
	g, gm, err := stfile.Decode(file+" (committed)", got)
	if err != nil {
		return &DiffError{File: file, Problem: err.Error()}
	}
	w, wm, err := stfile.Decode(file+" (regenerated)", want)
	if err != nil {
		return &DiffError{File: file, Problem: err.Error()}
	}
	if d := DiffTensors(w, g); len(d) > 0 {
		return &DiffError{File: file, Tensor: d[0].Tensor, Problem: d[0].Problem}
	}
	for k, v := range wm {
		if gm[k] != v {
			return &DiffError{File: file, Problem: fmt.Sprintf("metadata %q is %q, regenerated %q", k, gm[k], v)}
		}
	}
	return &DiffError{File: file, Problem: "bytes differ outside the tensors (header layout)"}
}

// MaxManifestBytes bounds manifest.json: the released manifest is about
// 0.6 MiB, so 16 MiB leaves room for a set many times larger and still
// bounds what decoding a hostile one costs.
const MaxManifestBytes = 16 << 20

// MaxSetBytes bounds the total size of the distinct files a manifest
// lists. A loaded set keeps every file it verified in memory (so that
// what it hands out is what it hashed), and the released set is about
// 29 MiB: 512 MiB is far beyond any real set and bounds both the memory
// and the hashing a hostile manifest can ask for.
const MaxSetBytes = 512 << 20

// Load opens a golden set directory (an os.DirFS, or the embedded default)
// and checks its manifest: strict JSON (internal/golden/strictjson: no unknown,
// duplicated or case-folded keys, no missing field, nothing after the
// value, strings valid UTF-8, at most six times its size once decoded), the schema
// version, unique input set and case names, and that every file it lists
// exists with the recorded SHA-256 and size. Each distinct file is read
// and hashed once, however often it is listed; the manifest may hold at
// most MaxManifestBytes and its distinct files MaxSetBytes in all.
//
// The set keeps the bytes it verified: Inputs, Expected, File and
// ManifestSHA256 never read fsys again, so a file changed after Load
// cannot reach a certificate that names the manifest's digest.
func Load(fsys fs.FS) (*Set, error) {
	mb, err := fs.ReadFile(fsys, ManifestFile)
	if err != nil {
		return nil, fmt.Errorf("golden set: %w", err)
	}
	if len(mb) > MaxManifestBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a manifest may hold", ManifestFile, len(mb), MaxManifestBytes)
	}
	var m Manifest
	// One pass over the bytes, every field json.Marshal writes present, and
	// a manifest shaped to decode into far more than its size refused (as
	// certificates are: internal/golden/strictjson).
	err = strictjson.DecodeBounded(mb, &m, strictjson.Options{RequireFields: true, MaxFootprint: 6*int64(len(mb)) + 1<<20})
	if err != nil {
		return nil, fmt.Errorf("%s: malformed: %w", ManifestFile, err)
	}
	if m.Schema != SchemaVersion {
		return nil, fmt.Errorf("%s: schema version %d, this build reads %d", ManifestFile, m.Schema, SchemaVersion)
	}
	s := &Set{Manifest: m, manifestSHA256: digest(mb), inputs: map[string]InputFile{}, files: map[string][]byte{}}
	// Every distinct file once: its digest and size must be the same
	// wherever it is listed, and the sizes the manifest records are summed
	// before anything is read.
	type want struct {
		sum   string
		bytes int
		by    string
	}
	wants := map[string]want{}
	var order []string
	total := int64(0)
	list := func(by, p, sum string, n int) error {
		if p == "" || !fs.ValidPath(p) || path.Clean(p) != p || p == ManifestFile {
			return fmt.Errorf("%s: %s: invalid file path %q", ManifestFile, by, p)
		}
		if n < 0 {
			return fmt.Errorf("%s: %s: file %s has negative size %d", ManifestFile, by, p, n)
		}
		if w, ok := wants[p]; ok {
			if w.sum != sum || w.bytes != n {
				return fmt.Errorf("%s: %s lists %s with SHA-256 %s (%d bytes), %s with %s (%d bytes)", ManifestFile, by, p, sum, n, w.by, w.sum, w.bytes)
			}
			return nil
		}
		wants[p] = want{sum, n, by}
		order = append(order, p)
		if total += int64(n); total > MaxSetBytes {
			return fmt.Errorf("%s: the files it lists hold more than %d bytes in all (the limit of a golden set)", ManifestFile, MaxSetBytes)
		}
		return nil
	}
	for _, in := range m.Inputs {
		if _, ok := s.inputs[in.Name]; ok {
			return nil, fmt.Errorf("%s: input set %q is listed twice", ManifestFile, in.Name)
		}
		if err := list("input set "+in.Name, in.File, in.SHA256, in.Bytes); err != nil {
			return nil, err
		}
		s.inputs[in.Name] = in
	}
	cases := map[string]bool{}
	for _, c := range m.Cases {
		if cases[c.Name] {
			return nil, fmt.Errorf("%s: case %q is listed twice", ManifestFile, c.Name)
		}
		cases[c.Name] = true
		if _, ok := s.inputs[c.Inputs]; !ok {
			return nil, fmt.Errorf("%s: case %s names unknown input set %q", ManifestFile, c.Name, c.Inputs)
		}
		if err := list("case "+c.Name, c.File, c.SHA256, c.Bytes); err != nil {
			return nil, err
		}
	}
	for _, p := range order {
		w := wants[p]
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("golden set: %w", err)
		}
		if len(b) != w.bytes {
			return nil, fmt.Errorf("%s: %d bytes, manifest records %d", p, len(b), w.bytes)
		}
		if d := digest(b); d != w.sum {
			return nil, fmt.Errorf("%s: SHA-256 %s, manifest records %s", p, d, w.sum)
		}
		s.files[p] = b
	}
	return s, nil
}

// Set is a loaded golden set: its manifest and the bytes of every file
// it lists, as verified by Load.
type Set struct {
	Manifest       Manifest
	manifestSHA256 string
	inputs         map[string]InputFile
	files          map[string][]byte
}

// ManifestSHA256 is the SHA-256 (hex) of the manifest.json bytes Load
// decoded: the digest a certificate names for this set.
func (s *Set) ManifestSHA256() string { return s.manifestSHA256 }

// File returns a copy of the verified bytes of a file the manifest lists
// (a slash-separated path such as "inputs/x.safetensors").
func (s *Set) File(p string) ([]byte, error) {
	b, ok := s.files[p]
	if !ok {
		return nil, fmt.Errorf("golden set: %s is not a file the manifest lists", p)
	}
	return bytes.Clone(b), nil
}

// Inputs decodes the input tensors of a case.
func (s *Set) Inputs(c CaseFile) (ops.Tensors, error) {
	in, ok := s.inputs[c.Inputs]
	if !ok {
		return nil, fmt.Errorf("case %s: unknown input set %q", c.Name, c.Inputs)
	}
	return s.decode(in.File)
}

// Expected decodes the expected output tensors of a case.
func (s *Set) Expected(c CaseFile) (ops.Tensors, error) { return s.decode(c.File) }

// decode decodes a verified file (stfile.Decode copies the tensor data,
// so the kept bytes are never shared).
func (s *Set) decode(p string) (ops.Tensors, error) {
	b, ok := s.files[p]
	if !ok {
		return nil, fmt.Errorf("golden set: %s is not a file the manifest lists", p)
	}
	ts, _, err := stfile.Decode(p, b)
	return ts, err
}

// Case finds a case by name.
func (s *Set) Case(name string) (CaseFile, bool) {
	for _, c := range s.Manifest.Cases {
		if c.Name == name {
			return c, true
		}
	}
	return CaseFile{}, false
}

// TensorInfos describes ts as a manifest records a file's tensors (names
// sorted, with dtypes, logical formats and shapes).
func TensorInfos(ts ops.Tensors) []TensorInfo { return infos(ts) }
