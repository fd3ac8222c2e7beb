// Package gemv holds reference matrix-vector products over low-precision
// formats that are bit-exact against a declared order of operations.
//
// A float GEMV's bits depend on the order of its roundings, so the order is
// data: a Schedule (K tiling, lanes, grouping, fused or separate
// multiply-adds, accumulator, partial and output precision, reduction
// order). Named schedules model public kernels (Lookup, Names); any other
// is written as a spec string (Schedule.String, Parse). The products are:
//
//   - SparseFP4GEMV: 2:4-sparse NVFP4 expert weights in the dgx-vllm v7
//     transposed layout times fp16 activations, batched over active experts;
//   - MXFP4Q81GEMV: llama.cpp block_mxfp4 rows times block_q8_1 activations
//     (vec_dot_mxfp4_q8_1 under mmvq's thread split);
//   - F16GEMV and AWQGEMV: fp16 (AWQ-dequantized) weights times fp16
//     activations with float32 accumulation.
//
// For kernels whose order is unknown, ExactDot computes the exact result
// and Bound checks an output against the rigorous error bound of every
// float32 summation order; its verdict is "within bound", never
// "bit-exact".
//
// The package is pure Go with no platform-dependent float behaviour: every
// product that must round is an explicit float32 conversion (so the Go
// compiler cannot fuse it), and fused steps use a correctly rounded float32
// FMA.
package gemv
