//go:build darwin && metal

// The macOS harness: Metal.framework through cgo and Objective-C.
//
// UNVERIFIED: written on Linux, where it can be neither built nor run.
// Nothing in this file has been compiled; treat a first run on a Mac as
// its test (go test -tags metal ./backends/metal/ on Apple silicon with
// Xcode's command-line tools).

package metal

/*
#cgo CFLAGS: -x objective-c -fno-objc-arc -Wall
#cgo LDFLAGS: -framework Metal -framework Foundation
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

static char *bx_strdup(NSString *s) {
	const char *c = s ? [s UTF8String] : "unknown error";
	return strdup(c ? c : "unknown error");
}

// bx_open returns the default GPU (+1) and its command queue (+1).
static int bx_open(void **dev, void **queue, char **name, char **err) {
	@autoreleasepool {
		id<MTLDevice> d = MTLCreateSystemDefaultDevice();
		if (d == nil) {
			*err = strdup("no Metal device (MTLCreateSystemDefaultDevice returned nil)");
			return -1;
		}
		id<MTLCommandQueue> q = [d newCommandQueue];
		if (q == nil) {
			[d release];
			*err = strdup("newCommandQueue failed");
			return -1;
		}
		*dev = (void *)d;
		*queue = (void *)q;
		*name = bx_strdup([d name]);
		return 0;
	}
}

// bx_pipeline compiles src with fast math disabled and returns the compute
// pipeline (+1) of function fn, with its SIMD width.
static void *bx_pipeline(void *dev, const char *src, const char *fn, int *simd, int *maxThreads, char **err) {
	@autoreleasepool {
		id<MTLDevice> d = (id<MTLDevice>)dev;
		MTLCompileOptions *opt = [[[MTLCompileOptions alloc] init] autorelease];
#if defined(__MAC_OS_X_VERSION_MAX_ALLOWED) && __MAC_OS_X_VERSION_MAX_ALLOWED >= 150000
		if (@available(macOS 15.0, *)) {
			opt.mathMode = MTLMathModeSafe;
			opt.mathFloatingPointFunctions = MTLMathFloatingPointFunctionsPrecise;
		} else {
			opt.fastMathEnabled = NO;
		}
#else
		opt.fastMathEnabled = NO;
#endif
		NSError *e = nil;
		id<MTLLibrary> lib = [d newLibraryWithSource:[NSString stringWithUTF8String:src] options:opt error:&e];
		if (lib == nil) {
			*err = bx_strdup([e localizedDescription]);
			return NULL;
		}
		id<MTLFunction> f = [lib newFunctionWithName:[NSString stringWithUTF8String:fn]];
		[lib release];
		if (f == nil) {
			*err = strdup("function not found in its library");
			return NULL;
		}
		id<MTLComputePipelineState> p = [d newComputePipelineStateWithFunction:f error:&e];
		[f release];
		if (p == nil) {
			*err = bx_strdup([e localizedDescription]);
			return NULL;
		}
		*simd = (int)[p threadExecutionWidth];
		*maxThreads = (int)[p maxTotalThreadsPerThreadgroup];
		return (void *)p;
	}
}

// One dispatch: buffers are bound by copy (shared storage), run, and read
// back.
typedef struct {
	void *bufs[64];
	int n;
} bx_call;

static void bx_bind(bx_call *c, void *dev, const void *p, size_t len) {
	id<MTLDevice> d = (id<MTLDevice>)dev;
	// Zero-length buffers are not allowed: bind 16 bytes.
	char pad[16] = {0};
	id<MTLBuffer> b = len ? [d newBufferWithBytes:p length:len options:MTLResourceStorageModeShared]
	                      : [d newBufferWithBytes:pad length:16 options:MTLResourceStorageModeShared];
	c->bufs[c->n++] = (void *)b;
}

static int bx_run(bx_call *c, void *queue, void *pipe, const uint32_t grid[3], const uint32_t group[3], char **err) {
	@autoreleasepool {
		id<MTLCommandQueue> q = (id<MTLCommandQueue>)queue;
		id<MTLCommandBuffer> cb = [q commandBuffer];
		id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder];
		[enc setComputePipelineState:(id<MTLComputePipelineState>)pipe];
		for (int i = 0; i < c->n; i++) {
			if (c->bufs[i] == NULL) {
				[enc endEncoding];
				*err = strdup("buffer allocation failed");
				return -1;
			}
			[enc setBuffer:(id<MTLBuffer>)c->bufs[i] offset:0 atIndex:i];
		}
		[enc dispatchThreadgroups:MTLSizeMake(grid[0], grid[1], grid[2])
		    threadsPerThreadgroup:MTLSizeMake(group[0], group[1], group[2])];
		[enc endEncoding];
		[cb commit];
		[cb waitUntilCompleted];
		if ([cb status] != MTLCommandBufferStatusCompleted) {
			*err = bx_strdup([[cb error] localizedDescription]);
			return -1;
		}
		return 0;
	}
}

static void bx_read(bx_call *c, int i, void *dst, size_t len) {
	if (len) memcpy(dst, [(id<MTLBuffer>)c->bufs[i] contents], len);
}

static void bx_release_call(bx_call *c) {
	for (int i = 0; i < c->n; i++)
		if (c->bufs[i]) [(id)c->bufs[i] release];
	c->n = 0;
}

static void bx_release(void *o) {
	if (o) [(id)o release];
}
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Device is the Metal GPU of this Mac with every module's pipelines
// compiled from the embedded sources with fast math disabled
// (MTLCompileOptions mathMode safe and precise functions on macOS 15 and
// later, fastMathEnabled = NO before). Dispatches are serialised.
type Device struct {
	name  string
	dev   unsafe.Pointer
	queue unsafe.Pointer

	mu    sync.Mutex
	pipes map[string]unsafe.Pointer
}

// Open compiles every entry point of every module on the default GPU.
func Open() (*Device, error) {
	var dev, queue unsafe.Pointer
	var name, cerr *C.char
	if C.bx_open(&dev, &queue, &name, &cerr) != 0 {
		defer C.free(unsafe.Pointer(cerr))
		return nil, fmt.Errorf("metal: %s", C.GoString(cerr))
	}
	d := &Device{name: C.GoString(name), dev: dev, queue: queue, pipes: map[string]unsafe.Pointer{}}
	C.free(unsafe.Pointer(name))
	for fn, mod := range entryPoints {
		m, err := lookupModule(mod)
		if err != nil {
			d.Close()
			return nil, err
		}
		src, err := m.Source()
		if err != nil {
			d.Close()
			return nil, err
		}
		csrc, cfn := C.CString(src), C.CString(fn)
		var simd, maxThreads C.int
		p := C.bx_pipeline(dev, csrc, cfn, &simd, &maxThreads, &cerr)
		C.free(unsafe.Pointer(csrc))
		C.free(unsafe.Pointer(cfn))
		if p == nil {
			msg := C.GoString(cerr)
			C.free(unsafe.Pointer(cerr))
			d.Close()
			return nil, fmt.Errorf("metal: compiling %s (module %s) on %s: %s", fn, mod, d.name, msg)
		}
		d.pipes[fn] = p
		if simd != 32 || maxThreads < 256 {
			d.Close()
			return nil, fmt.Errorf("metal: %s on %s: SIMD width %d, %d threads per threadgroup; the kernels need 32 and 256",
				fn, d.name, simd, maxThreads)
		}
	}
	return d, nil
}

// Close releases the pipelines, queue and device.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, p := range d.pipes {
		C.bx_release(p)
		delete(d.pipes, k)
	}
	C.bx_release(d.queue)
	C.bx_release(d.dev)
	d.queue, d.dev = nil, nil
	return nil
}

// Describe implements Backend.
func (d *Device) Describe() BackendInfo {
	return BackendInfo{
		Kind: "metal-gpu",
		Name: d.name,
		Verifies: "the kernels as compiled by this Metal compiler (fast math off) and run on this GPU, bit for bit against the " +
			"reference; GEMVs against their declared schedules, which assume simd_sum is the butterfly tree declared in the sources",
		Details: map[string]string{
			"compile options": "mathMode safe + precise functions (macOS 15+), else fastMathEnabled NO",
			"os":              runtime.GOOS + "/" + runtime.GOARCH,
		},
	}
}

// Dispatch implements Backend.
func (d *Device) Dispatch(ctx context.Context, kernel string, grid, group Dims, bufs ...[]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(bufs) > 64 {
		return fmt.Errorf("metal: %s: %d buffers, at most 64", kernel, len(bufs))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.pipes[kernel]
	if !ok {
		return fmt.Errorf("metal: unknown kernel %q", kernel)
	}
	var c C.bx_call
	defer C.bx_release_call(&c)
	for _, b := range bufs {
		var ptr unsafe.Pointer
		if len(b) > 0 {
			ptr = unsafe.Pointer(&b[0])
		}
		C.bx_bind(&c, d.dev, ptr, C.size_t(len(b)))
	}
	g := [3]C.uint32_t{C.uint32_t(grid.X), C.uint32_t(grid.Y), C.uint32_t(grid.Z)}
	t := [3]C.uint32_t{C.uint32_t(group.X), C.uint32_t(group.Y), C.uint32_t(group.Z)}
	var cerr *C.char
	if C.bx_run(&c, d.queue, p, &g[0], &t[0], &cerr) != 0 {
		defer C.free(unsafe.Pointer(cerr))
		return fmt.Errorf("metal: %s on %s: %s", kernel, d.name, C.GoString(cerr))
	}
	for i, b := range bufs {
		if len(b) > 0 {
			C.bx_read(&c, C.int(i), unsafe.Pointer(&b[0]), C.size_t(len(b)))
		}
	}
	return nil
}
