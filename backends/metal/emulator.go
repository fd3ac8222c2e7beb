package metal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/bitexact/bitexact/internal/golden/safeio"
)

// cxxFlags are the g++ flags of the Linux check. They pin the host's float
// behaviour to the kernels' declared schedule: no contraction of a*b+c
// into FMA, no fast math (metal_compat.h refuses to compile under
// -ffast-math and checks FLT_EVAL_METHOD == 0). On x86-64 float arithmetic
// is then scalar SSE, IEEE binary32 with every operation correctly rounded;
// the driver checks at startup that subnormals are not flushed.
var cxxFlags = []string{"-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Wno-attributes", "-Wno-deprecated-declarations"}

// emulatorVerifies is what a pass on the CPU emulation shows, in the words
// the test output, the certificate and README.md use.
const emulatorVerifies = "the kernels' logic only (indexing, packing, tie rules, integer bit manipulation, the declared float " +
	"schedules and simd_sum order as emulated), run on the CPU with IEEE binary32 arithmetic; not Apple GPU arithmetic, " +
	"not Apple's simd_sum order, not the Metal compiler"

// Emulator is the Linux check's Backend: the .metal sources compiled as
// C++ with cpu/metal_compat.h (address spaces as empty macros, SIMD groups
// of 32 lanes simulated in lockstep, software half) and run on the CPU by
// one child process that serves dispatches over its stdin and stdout. It
// is safe for concurrent use; dispatches are serialised.
type Emulator struct {
	// Compiler is the g++ version line.
	Compiler string
	// Binary is the path of the compiled driver.
	Binary string
	// Warnings holds the compiler's diagnostics, if any (the kernels
	// compile cleanly with -Wall on g++ 12).
	Warnings string

	mu   sync.Mutex
	cmd  *exec.Cmd
	in   *bufio.Writer
	inC  io.WriteCloser
	out  *bufio.Reader
	errb *bytes.Buffer
	dead error
}

// errNoCompiler is returned (wrapped) by NewEmulator when the C++
// compiler is not found.
var errNoCompiler = errors.New("metal: no C++ compiler (the Metal CPU check compiles the .metal sources with g++)")

// NewEmulator writes the kernel sources and the emulation driver into dir,
// compiles them with g++ (CXX, when set, names another g++-compatible
// compiler) into one binary and starts it.
func NewEmulator(ctx context.Context, dir string) (*Emulator, error) {
	if runtime.GOOS == "windows" {
		return nil, fmt.Errorf("%w: the emulator needs POSIX ucontext, which Windows lacks", errNoCompiler)
	}
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	path, err := exec.LookPath(cxx)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not on PATH", errNoCompiler, cxx)
	}
	out, err := safeio.OpenOutDir(dir)
	if err != nil {
		return nil, fmt.Errorf("metal: writing the emulator sources: %w", err)
	}
	defer out.Close()
	if err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return out.WriteFile(p, b, 0o644)
	}); err != nil {
		return nil, fmt.Errorf("metal: writing the emulator sources: %w", err)
	}
	ver, _ := exec.CommandContext(ctx, path, "--version").Output()
	bin := filepath.Join(dir, "bitexact-metal-cpu")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := append(append([]string{}, cxxFlags...),
		"-I", filepath.Join(dir, "cpu"), "-I", filepath.Join(dir, "kernels"),
		"-o", bin, filepath.Join(dir, "cpu", "driver.cpp"))
	cc := exec.CommandContext(ctx, path, args...)
	var cout bytes.Buffer
	cc.Stdout, cc.Stderr = &cout, &cout
	if err := cc.Run(); err != nil {
		return nil, fmt.Errorf("metal: compiling the kernels as C++ (%s %s): %v\n%s", cxx, strings.Join(args, " "), err, cout.String())
	}
	e := &Emulator{Compiler: strings.TrimSpace(firstLine(string(ver))), Binary: bin, Warnings: cout.String()}
	if err := e.start(); err != nil {
		return nil, err
	}
	return e, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func (e *Emulator) start() error {
	cmd := exec.Command(e.Binary)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	e.errb = &bytes.Buffer{}
	cmd.Stderr = e.errb
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("metal: starting the emulator: %w", err)
	}
	e.cmd, e.inC, e.in, e.out = cmd, in, bufio.NewWriterSize(in, 1<<20), bufio.NewReaderSize(out, 1<<20)
	return nil
}

// Close stops the emulator process.
func (e *Emulator) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cmd == nil {
		return nil
	}
	e.inC.Close()
	err := e.cmd.Wait()
	e.cmd = nil
	return err
}

// Describe implements Backend.
func (e *Emulator) Describe() BackendInfo {
	return BackendInfo{
		Kind:     "cpu-emulation",
		Name:     fmt.Sprintf("%s on %s/%s", e.Compiler, runtime.GOOS, runtime.GOARCH),
		Verifies: emulatorVerifies,
		Details: map[string]string{
			"cxxflags":    strings.Join(cxxFlags, " "),
			"float":       floatNote(),
			"simd_sum":    "butterfly xor tree, offsets 16, 8, 4, 2, 1, own value first (declared order; Apple's is undocumented)",
			"simdgroup":   "32 lanes in lockstep phases (coroutines); threadgroup_barrier and simd_* are phase boundaries",
			"half":        "software binary16, round to nearest even",
			"threadgroup": "one threadgroup at a time; threadgroup arrays are function statics",
		},
	}
}

func floatNote() string {
	if runtime.GOARCH == "amd64" {
		return "x86-64 scalar SSE: IEEE binary32, each operation correctly rounded, FTZ/DAZ off; fma = C library fmaf (correctly rounded)"
	}
	return runtime.GOARCH + ": IEEE binary32 (FLT_EVAL_METHOD 0), -ffp-contract=off; fma = C library fmaf"
}

// Dispatch implements Backend.
func (e *Emulator) Dispatch(ctx context.Context, kernel string, grid, group Dims, bufs ...[]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, d := range []int{grid.X, grid.Y, grid.Z, group.X, group.Y, group.Z} {
		if d < 1 || d > 1<<31-1 {
			return fmt.Errorf("metal emulator: %s: bad dispatch size grid %v group %v", kernel, grid, group)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead != nil {
		return e.dead
	}
	if e.cmd == nil {
		return errors.New("metal emulator: closed")
	}
	if err := e.roundTrip(kernel, grid, group, bufs); err != nil {
		if !strings.HasPrefix(err.Error(), "metal emulator: "+kernel+": ") {
			// The protocol broke: the process is gone or confused.
			e.dead = fmt.Errorf("metal emulator: %s: %w (stderr: %s)", kernel, err, strings.TrimSpace(e.errb.String()))
			return e.dead
		}
		return err
	}
	return nil
}

func (e *Emulator) roundTrip(kernel string, grid, group Dims, bufs [][]byte) error {
	le := binary.LittleEndian
	w := e.in
	w.WriteString("BXRQ")
	var b4 [4]byte
	var b8 [8]byte
	put32 := func(v uint32) { le.PutUint32(b4[:], v); w.Write(b4[:]) }
	put32(uint32(len(kernel)))
	w.WriteString(kernel)
	for _, v := range []int{grid.X, grid.Y, grid.Z, group.X, group.Y, group.Z, len(bufs)} {
		put32(uint32(v))
	}
	for _, b := range bufs {
		le.PutUint64(b8[:], uint64(len(b)))
		w.Write(b8[:])
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var magic [4]byte
	if _, err := io.ReadFull(e.out, magic[:]); err != nil {
		return err
	}
	switch string(magic[:]) {
	case "BXOK":
	case "BXER":
		if _, err := io.ReadFull(e.out, b4[:]); err != nil {
			return err
		}
		msg := make([]byte, le.Uint32(b4[:]))
		if _, err := io.ReadFull(e.out, msg); err != nil {
			return err
		}
		return fmt.Errorf("metal emulator: %s: %s", kernel, msg)
	default:
		return fmt.Errorf("bad response %q", magic[:])
	}
	for i, b := range bufs {
		if _, err := io.ReadFull(e.out, b8[:]); err != nil {
			return err
		}
		if n := le.Uint64(b8[:]); n != uint64(len(b)) {
			return fmt.Errorf("buffer %d came back with %d bytes, sent %d", i, n, len(b))
		}
		if _, err := io.ReadFull(e.out, b); err != nil {
			return err
		}
	}
	return nil
}
