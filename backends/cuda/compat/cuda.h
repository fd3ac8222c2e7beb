/*
 * bitexact: CUDA 13 compatibility shim for gorgonia.org/cu v0.9.6.
 *
 * Why: gorgonia.org/cu v0.9.6 was generated against the CUDA 10/11 driver
 * API. CUDA 13's cuda.h maps five of the names it calls onto new entry
 * points with different parameters, so cgo refuses to compile the package:
 *
 *   cuCtxCreate            -> cuCtxCreate_v4            (adds CUctxCreateParams*)
 *   cuMemAdvise            -> cuMemAdvise_v2            (CUmemLocation, not CUdevice)
 *   cuMemPrefetchAsync     -> cuMemPrefetchAsync_v2     (CUmemLocation, flags)
 *   cuGraphAddDependencies -> cuGraphAddDependencies_v2 (adds CUgraphEdgeData*)
 *   cuGraphGetEdges        -> cuGraphGetEdges_v2        (adds CUgraphEdgeData*)
 *
 * The driver library still exports the old entry points with their old
 * signatures (cuCtxCreate_v2, cuMemAdvise, cuMemPrefetchAsync,
 * cuGraphAddDependencies, cuGraphGetEdges), so binding the five names back
 * to them restores the ABI gorgonia.org/cu was written for.
 *
 * How: this directory goes first on the C include path
 * (CGO_CFLAGS=-I<repo>/backends/cuda/compat, set by the Makefile's cuda
 * section and by the device run command). `#include <cuda.h>` in
 * gorgonia.org/cu then finds this file, which pulls in the toolkit's real
 * cuda.h with #include_next and, for CUDA 13 and later only, undoes the
 * five name mappings. For CUDA 12 and earlier it changes nothing.
 *
 * bitexact itself calls none of the five (it creates its context through
 * cuCtxCreate_v2 via cu.Device.MakeContext, which this header routes).
 */
#ifndef BITEXACT_CUDA_COMPAT_H
#define BITEXACT_CUDA_COMPAT_H

#include_next <cuda.h>

#if defined(CUDA_VERSION) && CUDA_VERSION >= 13000

#ifdef __cplusplus
extern "C" {
#endif

#undef cuCtxCreate
#define cuCtxCreate cuCtxCreate_v2
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);

#undef cuMemAdvise
CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device);

#undef cuMemPrefetchAsync
CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream);

#undef cuGraphAddDependencies
CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies);

#undef cuGraphGetEdges
CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_VERSION >= 13000 */
#endif /* BITEXACT_CUDA_COMPAT_H */
