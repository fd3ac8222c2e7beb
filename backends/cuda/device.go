//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

// DefaultTimeout bounds every driver call made through a Device whose
// Timeout is zero. A kernel still running at its deadline turns into an
// error instead of a hang.
const DefaultTimeout = 60 * time.Second

// Device is one GPU with its own CUDA context and the embedded modules
// that it can load. All driver calls run on one OS thread owned by the
// Device (a CUDA context is current per thread); methods are safe for
// concurrent use and are serialised on that thread.
type Device struct {
	// Timeout bounds each call; zero means DefaultTimeout. A call that
	// misses its deadline (or its context's) returns an error and leaves
	// the Device broken: the driver thread is still inside the call, so
	// every later call fails fast with the same error.
	Timeout time.Duration

	ordinal int
	dev     cu.Device
	name    string
	cc      int
	sms     int // multiprocessors, for grids sized to the GPU
	work    chan func()

	mu     sync.Mutex
	broken error

	// owned by the driver thread
	cuctx   cu.CUContext
	modules []loaded
	fns     map[string]cu.Function
	staging cu.DevicePtr
	stageN  int64
}

type loaded struct {
	m   Module
	mod cu.Module
}

// Info describes the device and driver, for certificates.
type Info struct {
	Name string `json:"gpu"`
	// CC is the compute capability as "9.0".
	CC string `json:"compute_capability"`
	// DriverAPI is cuDriverGetVersion, e.g. 13000 for CUDA 13.0.
	DriverAPI int `json:"driver_cuda_version"`
	// Driver is the kernel module's version string from
	// /proc/driver/nvidia/version, when readable.
	Driver   string `json:"driver,omitempty"`
	MemBytes int64  `json:"memory_bytes"`
	SMs      int    `json:"multiprocessors"`
}

// Open creates a context on GPU ordinal and loads every embedded module
// that the GPU's compute capability can run.
func Open(ordinal int) (*Device, error) {
	d := &Device{ordinal: ordinal, work: make(chan func()), fns: map[string]cu.Function{}}
	ready := make(chan error, 1)
	go d.loop(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return d, nil
}

// loop is the driver thread.
func (d *Device) loop(ready chan<- error) {
	runtime.LockOSThread()
	err := func() error {
		n, err := cu.NumDevices()
		if err != nil {
			return fmt.Errorf("cuda: counting devices: %w", err)
		}
		if d.ordinal < 0 || d.ordinal >= n {
			return fmt.Errorf("cuda: device %d requested, %d present", d.ordinal, n)
		}
		if d.dev, err = cu.GetDevice(d.ordinal); err != nil {
			return fmt.Errorf("cuda: device %d: %w", d.ordinal, err)
		}
		if d.name, err = d.dev.Name(); err != nil {
			return fmt.Errorf("cuda: device %d name: %w", d.ordinal, err)
		}
		major, err := d.dev.Attribute(cu.ComputeCapabilityMajor)
		if err != nil {
			return err
		}
		minor, err := d.dev.Attribute(cu.ComputeCapabilityMinor)
		if err != nil {
			return err
		}
		d.cc = major*10 + minor
		if d.sms, err = d.dev.Attribute(cu.MultiprocessorCount); err != nil {
			return err
		}
		if d.cuctx, err = d.dev.MakeContext(cu.SchedBlockingSync); err != nil {
			return fmt.Errorf("cuda: creating a context on %s: %w", d.name, err)
		}
		for _, m := range Modules {
			if d.cc < m.MinCC || d.cc > m.MaxCC {
				continue
			}
			src, err := m.PTX()
			if err != nil {
				return err
			}
			mod, err := cu.LoadData(src)
			if err != nil {
				return fmt.Errorf("cuda: loading module %s (%s) on %s (sm_%d): %w", m.Name, m.Arch, d.name, d.cc, err)
			}
			d.modules = append(d.modules, loaded{m, mod})
		}
		return nil
	}()
	ready <- err
	if err != nil {
		return
	}
	for f := range d.work {
		f()
	}
	if d.staging != 0 {
		cu.MemFree(d.staging)
	}
	for _, l := range d.modules {
		l.mod.Unload()
	}
	d.cuctx.Destroy()
	runtime.UnlockOSThread()
}

// Close releases the context. A broken Device's thread cannot be
// reclaimed; Close then only reports the breakage.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken != nil {
		return d.broken
	}
	if d.work != nil {
		close(d.work)
		d.work = nil
	}
	return nil
}

// do runs f on the driver thread, waiting at most the Device's timeout or
// until ctx ends. what names the operation in errors.
func (d *Device) do(ctx context.Context, what string, f func() error) error {
	d.mu.Lock()
	if d.broken != nil {
		err := d.broken
		d.mu.Unlock()
		return fmt.Errorf("cuda: %s: device unusable after an earlier failure: %w", what, err)
	}
	if d.work == nil {
		d.mu.Unlock()
		return fmt.Errorf("cuda: %s: device closed", what)
	}
	work := d.work
	d.mu.Unlock()

	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	done := make(chan error, 1)
	call := func() { done <- f() }
	select {
	case work <- call:
	case <-timer.C:
		return fmt.Errorf("cuda: %s: driver thread busy for %v", what, timeout)
	case <-ctx.Done():
		return fmt.Errorf("cuda: %s: %w", what, ctx.Err())
	}
	var err error
	select {
	case err = <-done:
		return err
	case <-timer.C:
		err = fmt.Errorf("cuda: %s: no answer within %v (kernel hung or too slow)", what, timeout)
	case <-ctx.Done():
		err = fmt.Errorf("cuda: %s: %w", what, ctx.Err())
	}
	d.mu.Lock()
	d.broken = err
	d.mu.Unlock()
	return err
}

// Info returns the device description.
func (d *Device) Info(ctx context.Context) (Info, error) {
	in := Info{Name: d.name, CC: fmt.Sprintf("%d.%d", d.cc/10, d.cc%10), DriverAPI: cu.Version()}
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		in.Driver = strings.TrimSpace(line)
	}
	in.SMs = d.sms
	err := d.do(ctx, "device info", func() error {
		var err error
		in.MemBytes, err = d.dev.TotalMem()
		return err
	})
	return in, err
}

// CC is the compute capability as major*10+minor.
func (d *Device) CC() int { return d.cc }

// Loaded reports whether module name was loaded on this device.
func (d *Device) Loaded(name string) bool {
	for _, l := range d.modules {
		if l.m.Name == name {
			return true
		}
	}
	return false
}

// Buffer is device memory.
type Buffer struct {
	ptr cu.DevicePtr
	n   int64
}

// Len is the buffer's size in bytes.
func (b Buffer) Len() int64 { return b.n }

// Alloc allocates n bytes of device memory (n > 0).
func (d *Device) Alloc(ctx context.Context, n int64) (Buffer, error) {
	if n <= 0 {
		return Buffer{}, fmt.Errorf("cuda: alloc of %d bytes", n)
	}
	var b Buffer
	err := d.do(ctx, fmt.Sprintf("alloc %d bytes", n), func() error {
		p, err := cu.MemAlloc(n)
		if err != nil {
			return err
		}
		b = Buffer{p, n}
		return nil
	})
	return b, err
}

// Free releases b; freeing the zero Buffer does nothing.
func (d *Device) Free(ctx context.Context, b Buffer) error {
	if b.ptr == 0 {
		return nil
	}
	return d.do(ctx, "free", func() error { return cu.MemFree(b.ptr) })
}

// Upload allocates a buffer holding src.
func (d *Device) Upload(ctx context.Context, src []byte) (Buffer, error) {
	n := int64(len(src))
	if n == 0 {
		n = 1 // a valid pointer for empty tensors
	}
	b, err := d.Alloc(ctx, n)
	if err != nil || len(src) == 0 {
		return b, err
	}
	err = d.do(ctx, fmt.Sprintf("copy %d bytes to the device", len(src)), func() error {
		return cu.MemcpyHtoD(b.ptr, unsafe.Pointer(&src[0]), int64(len(src)))
	})
	if err != nil {
		d.Free(ctx, b)
	}
	return b, err
}

// Download copies the first len(dst) bytes of b into dst.
func (d *Device) Download(ctx context.Context, dst []byte, b Buffer) error {
	if len(dst) == 0 {
		return nil
	}
	if int64(len(dst)) > b.n {
		return fmt.Errorf("cuda: download of %d bytes from a %d-byte buffer", len(dst), b.n)
	}
	return d.do(ctx, fmt.Sprintf("copy %d bytes from the device", len(dst)), func() error {
		return cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), b.ptr, int64(len(dst)))
	})
}

// Memset fills b with byte v.
func (d *Device) Memset(ctx context.Context, b Buffer, v byte) error {
	return d.do(ctx, "memset", func() error { return cu.MemsetD8(b.ptr, v, b.n) })
}

// Dims is a launch shape.
type Dims struct{ X, Y, Z int }

// Grid1D returns a one-dimensional grid covering n work items with block
// threads each, capped at maxBlocks (grid-stride kernels loop over the
// rest).
func Grid1D(n int64, block, maxBlocks int) Dims {
	g := (n + int64(block) - 1) / int64(block)
	if g < 1 {
		g = 1
	}
	if g > int64(maxBlocks) {
		g = int64(maxBlocks)
	}
	return Dims{int(g), 1, 1}
}

// maxGridX is the largest grid x-dimension a launch may ask for (compute
// capability 3.0 and later: 2^31 - 1 blocks).
const maxGridX = 1<<31 - 1

// unaryGrid is the launch shape of the unary conversion kernels (tensor
// and range forms) over n elements: one thread per 32-bit output word (four
// inputs), 256 threads a block, as many blocks as words need. The kernels
// loop grid-stride, so any grid is correct; a grid sized to the data
// rather than to the GPU keeps every multiprocessor's full complement of
// blocks in flight to the end. On an H100, 2^28 float32 -> E4M3 took
// 0.4539 ms on a persistent grid of 16 blocks per multiprocessor (each
// thread looping 124 times), 0.4334 ms on this one, where torch's
// .to(torch.float8_e4m3fn) took 0.4395 ms in the same run (unrolling the
// loop to 2, 4 or 8 loads in flight per thread did not help:
// docs/rationale/cuda.md).
func unaryGrid(n int64) Dims { return Grid1D((n+3)/4, 256, maxGridX) }

// KernelError is a driver error raised by launching or running a kernel.
type KernelError struct {
	Kernel string
	Stage  string // "lookup", "launch" or "run"
	Err    error
}

func (e *KernelError) Error() string {
	return fmt.Sprintf("cuda: kernel %s: %s: %v", e.Kernel, e.Stage, e.Err)
}

func (e *KernelError) Unwrap() error { return e.Err }

// function resolves a kernel by name; driver thread only.
func (d *Device) function(name string) (cu.Function, error) {
	if fn, ok := d.fns[name]; ok {
		return fn, nil
	}
	for _, l := range d.modules {
		fn, err := l.mod.Function(name)
		if err == nil {
			d.fns[name] = fn
			return fn, nil
		}
	}
	return cu.Function{}, fmt.Errorf("not found in the loaded modules")
}

// packArgs turns kernel arguments into the pointer array cuLaunchKernel
// takes. gorgonia.org/cu copies 8 bytes per parameter, so every value is
// widened into its own 8-byte slot; the driver reads the parameter's own
// size from the start of the slot (little-endian), so 32-bit parameters
// and floats work too.
func packArgs(args []any) ([]unsafe.Pointer, []uint64, error) {
	vals := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case Buffer:
			vals[i] = uint64(v.ptr)
		case int:
			vals[i] = uint64(v)
		case int64:
			vals[i] = uint64(v)
		case uint64:
			vals[i] = v
		case uint32:
			vals[i] = uint64(v)
		case int32:
			vals[i] = uint64(uint32(v))
		case float32:
			vals[i] = uint64(math.Float32bits(v))
		default:
			return nil, nil, fmt.Errorf("argument %d: unsupported type %T", i, a)
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	return ptrs, vals, nil
}

// Launch runs kernel name on grid x block threads with the given
// arguments and waits for it to finish. Launch errors (bad shape, missing
// kernel) and run errors (illegal address, ...) come back as *KernelError
// naming the kernel; a kernel that outlives the timeout becomes an error
// too (and breaks the Device).
func (d *Device) Launch(ctx context.Context, name string, grid, block Dims, shared int, args ...any) error {
	ptrs, vals, err := packArgs(args)
	if err != nil {
		return &KernelError{name, "arguments", err}
	}
	return d.do(ctx, "kernel "+name, func() error {
		fn, err := d.function(name)
		if err != nil {
			return &KernelError{name, "lookup", err}
		}
		if err := fn.Launch(grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, shared, cu.Stream{}, ptrs); err != nil {
			return &KernelError{name, "launch", err}
		}
		runtime.KeepAlive(vals)
		if err := cu.Synchronize(); err != nil {
			return &KernelError{name, "run", err}
		}
		return nil
	})
}

// Time launches kernel name reps times back to back between two CUDA
// events and returns the mean milliseconds per launch.
func (d *Device) Time(ctx context.Context, reps int, name string, grid, block Dims, shared int, args ...any) (float64, error) {
	ptrs, vals, err := packArgs(args)
	if err != nil {
		return 0, &KernelError{name, "arguments", err}
	}
	var ms float64
	err = d.do(ctx, "timing kernel "+name, func() error {
		fn, err := d.function(name)
		if err != nil {
			return &KernelError{name, "lookup", err}
		}
		return d.timed(reps, &ms, func() error {
			if err := fn.Launch(grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, shared, cu.Stream{}, ptrs); err != nil {
				return &KernelError{name, "launch", err}
			}
			return nil
		})
	})
	runtime.KeepAlive(vals)
	return ms, err
}

// launchStep is one kernel launch of a timed sequence.
type launchStep struct {
	Kernel      string
	Grid, Block Dims
	Shared      int
	Args        []any
}

// timeSteps launches the steps in order, reps times, between two CUDA
// events and returns the mean milliseconds per repetition of the whole
// sequence.
func (d *Device) timeSteps(ctx context.Context, reps int, steps ...launchStep) (float64, error) {
	type packed struct {
		fn   cu.Function
		ptrs []unsafe.Pointer
		vals []uint64
	}
	ps := make([]packed, len(steps))
	for i, s := range steps {
		ptrs, vals, err := packArgs(s.Args)
		if err != nil {
			return 0, &KernelError{s.Kernel, "arguments", err}
		}
		ps[i].ptrs, ps[i].vals = ptrs, vals
	}
	var ms float64
	err := d.do(ctx, "timing kernels", func() error {
		for i, s := range steps {
			fn, err := d.function(s.Kernel)
			if err != nil {
				return &KernelError{s.Kernel, "lookup", err}
			}
			ps[i].fn = fn
		}
		err := d.timed(reps, &ms, func() error {
			for i, s := range steps {
				if err := ps[i].fn.Launch(s.Grid.X, s.Grid.Y, s.Grid.Z, s.Block.X, s.Block.Y, s.Block.Z, s.Shared, cu.Stream{}, ps[i].ptrs); err != nil {
					return &KernelError{s.Kernel, "launch", err}
				}
			}
			return nil
		})
		if err == nil {
			err = cu.Synchronize()
		}
		return err
	})
	runtime.KeepAlive(ps)
	return ms, err
}

// timeCopy times a device-to-device copy of n bytes from src to dst,
// the bandwidth yardstick of the benchmarks.
func (d *Device) timeCopy(ctx context.Context, reps int, dst, src Buffer, n int64) (float64, error) {
	if n > dst.n || n > src.n {
		return 0, errors.New("cuda: copy larger than its buffers")
	}
	var ms float64
	err := d.do(ctx, "timing device copy", func() error {
		return d.timed(reps, &ms, func() error { return cu.MemcpyDtoDAsync(dst.ptr, src.ptr, n, cu.Stream{}) })
	})
	return ms, err
}

// timed runs f once to warm up, then, behind hold, reps times between
// two events on the default stream; driver thread only.
func (d *Device) timed(reps int, ms *float64, f func() error) error {
	if reps < 1 {
		reps = 1
	}
	start, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return err
	}
	defer cu.DestroyEvent(&start)
	stop, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return err
	}
	defer cu.DestroyEvent(&stop)
	if err := f(); err != nil { // warm-up
		return err
	}
	if err := d.hold(); err != nil {
		return err
	}
	if err := start.Record(cu.Stream{}); err != nil {
		return err
	}
	for i := 0; i < reps; i++ {
		if err := f(); err != nil {
			return err
		}
	}
	if err := stop.Record(cu.Stream{}); err != nil {
		return err
	}
	if err := stop.Synchronize(); err != nil {
		return err
	}
	t, err := start.Elapsed(stop)
	if err != nil {
		return err
	}
	*ms = t / float64(reps)
	return nil
}

// holdCycles is how long hold keeps the stream busy: about a millisecond
// at the H100's 1.6-2 GHz, where enqueuing 50 launches through cgo takes
// a few hundred microseconds.
const holdCycles = 2_000_000

// hold queues util_spin, which keeps the stream busy for holdCycles SM
// cycles, so that everything timed queues behind it and the start event
// runs only once it is all enqueued: the events then time the GPU running
// the launches back to back, not the host enqueuing them, whose cgo
// launch costs microseconds, near a small kernel's own time. Driver
// thread only.
func (d *Device) hold() error {
	fn, err := d.function("util_spin")
	if err != nil {
		return &KernelError{"util_spin", "lookup", err}
	}
	done, err := d.stage(4)
	if err != nil {
		return err
	}
	ptrs, vals, err := packArgs([]any{uint64(holdCycles), Buffer{ptr: done, n: 4}})
	if err != nil {
		return err
	}
	err = fn.Launch(1, 1, 1, 1, 1, 1, 0, cu.Stream{}, ptrs)
	runtime.KeepAlive(vals)
	if err != nil {
		return &KernelError{"util_spin", "launch", err}
	}
	return nil
}

// stage returns a device scratch buffer of at least n bytes, reused
// across calls; driver thread only.
func (d *Device) stage(n int64) (cu.DevicePtr, error) {
	if d.stageN >= n {
		return d.staging, nil
	}
	if d.staging != 0 {
		cu.MemFree(d.staging)
		d.staging, d.stageN = 0, 0
	}
	p, err := cu.MemAlloc(n)
	if err != nil {
		return 0, err
	}
	d.staging, d.stageN = p, n
	return p, nil
}

// rangeInto runs a range kernel (NAME_range(start, out, n), one output
// byte per input) over the n = len(out) inputs start, start+1, ... and
// copies the codes into out. It reuses one device buffer, so a sweep over
// all 2^32 inputs allocates nothing per call.
func (d *Device) rangeInto(ctx context.Context, kernel string, start uint32, out []byte) error {
	if len(out) == 0 {
		return nil
	}
	n := int64(len(out))
	return d.do(ctx, "kernel "+kernel, func() error {
		buf, err := d.stage((n + 3) &^ 3)
		if err != nil {
			return &KernelError{kernel, "staging alloc", err}
		}
		fn, err := d.function(kernel)
		if err != nil {
			return &KernelError{kernel, "lookup", err}
		}
		g := unaryGrid(n)
		vals := []uint64{uint64(start), uint64(buf), uint64(n)}
		ptrs := []unsafe.Pointer{unsafe.Pointer(&vals[0]), unsafe.Pointer(&vals[1]), unsafe.Pointer(&vals[2])}
		if err := fn.Launch(g.X, 1, 1, 256, 1, 1, 0, cu.Stream{}, ptrs); err != nil {
			return &KernelError{kernel, "launch", err}
		}
		runtime.KeepAlive(vals)
		if err := cu.MemcpyDtoH(unsafe.Pointer(&out[0]), buf, n); err != nil {
			return &KernelError{kernel, "run", err}
		}
		return nil
	})
}
