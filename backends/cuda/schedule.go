package cuda

import "github.com/bitexact/bitexact/refimpl/gemv"

// Launch constants of the GEMV kernels, as written in their .cu files. The
// declared schedules below are built from them, so a change of a kernel
// constant shows up as a different schedule handed to the reference.
const (
	// v7TileK is TILE_K of sp24_gemv_v7 (kernels/sparse24.cu).
	v7TileK = 64
	// v7Threads is its block size; each thread owns THREAD_N = 4
	// columns, so a block covers 512.
	v7Threads = 128
	// v7MaxTiles is V7_MAX_TILES of sp24_gemv_v7: a block computes 1 to
	// v7MaxTiles consecutive v7TileK tiles (v7Tiles picks how many). Each
	// tile still gets its own fp16 partial, so the schedule does not
	// depend on it.
	v7MaxTiles = 3
	// v7BlocksPerSM is the resident blocks per SM sp24_gemv_v7's register
	// budget targets (V7_MIN_BLOCKS): a wave of its grid.
	v7BlocksPerSM = 4
	// v7GroupK is the K span summed before the block scale multiplies it
	// (8: two 2:4 groups, one meta byte).
	v7GroupK = 8
	// V7ReduceWidth is the number of interleaved accumulators of the
	// partial reduction in sp24_gemv_v7's default (torch .sum-like)
	// configuration.
	V7ReduceWidth = 4
	// mmvqThreads is the block size of gemv_mxfp4_q8_1 and the lanes of
	// its schedule: 128 lanes, lane t taking half-blocks t, t+128, ...
	// (the kernel runs lanes 2u and 2u+1 on one thread).
	mmvqThreads = 128
	// mmvqRows is the rows each block of gemv_mxfp4_q8_1 computes (1 to
	// its MMVQ_MAX_ROWS, 4: two row slots of 64 threads, two rows each);
	// it shares the staged activations and does not change any row's
	// arithmetic. On an H100 (K=4096, N=11776, BenchmarkGEMV) 4 rows took
	// 14.6-14.9 us with the weights coming from DRAM and 12.3 us
	// L2-resident; 2 rows 15.9 and 15.3 us.
	mmvqRows = 4
	// mmvqGroupK is the elements per thread step (half a 32-block).
	mmvqGroupK = 16
)

// V7Schedule is the float schedule of sp24_gemv_v7: 64-K
// tiles each reduced to an fp16 partial, 8-K groups scaled then
// accumulated (fused or not), the partials added with width interleaved
// float32 accumulators (width 1: in tile order), fp16 out.
func V7Schedule(fused bool, width int) gemv.Schedule {
	s := gemv.Schedule{ChunkK: v7TileK, GroupK: v7GroupK, Fused: fused,
		Accum: gemv.FP32, Partial: gemv.FP16, Reduce: gemv.Strided, Width: width, Out: gemv.FP16}
	if width == 1 {
		s.Reduce, s.Width = gemv.Sequential, 0
	}
	return s
}

// MMVQSchedule is the float schedule of gemv_mxfp4_q8_1: 128 lanes, each a
// 16-element half-block at a time in K order, d*sumi accumulated (fused or
// not), warps 1..3 folded into warp 0, then a 32-wide xor butterfly,
// float32 out, a NaN written as the GPU's canonical 0x7FFFFFFF.
func MMVQSchedule(fused bool) gemv.Schedule {
	return gemv.Schedule{ChunkK: mmvqGroupK, Lanes: mmvqThreads, GroupK: mmvqGroupK, Fused: fused,
		Accum: gemv.FP32, Partial: gemv.FP32, Reduce: gemv.Butterfly, Width: 32, Out: gemv.FP32, CanonicalNaN: true}
}
