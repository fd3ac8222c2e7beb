// AWQ int4 packing, layout `awq` (refimpl/awq.AWQ; AutoAWQ gemm.py
// from_linear, the words vLLM's AWQ kernels read): a [rows, cols] matrix of
// 4-bit values becomes int32 words [rows, cols/8], column 8j+ORDER[p] in
// nibble p (bits 4p..4p+3), ORDER = 0, 2, 4, 6, 1, 3, 5, 7. The weight
// (rows = IC) and the zero points (rows = IC/G) pack alike.
//
// Integer only: no float schedule.
#include "bitexact.h"

constant uint awq_order[8] = {0, 2, 4, 6, 1, 3, 5, 7};

struct AWQPackArgs {
  uint rows, cols;  // cols % 8 == 0
};

// One thread per output word.
kernel void awq_pack(device const uchar *q [[buffer(0)]],
                     device uint *words [[buffer(1)]],
                     constant AWQPackArgs &args [[buffer(2)]],
                     uint w [[thread_position_in_grid]]) {
  uint wpr = args.cols / 8u;
  if (w >= args.rows * wpr) return;
  uint row = w / wpr, j = w % wpr;
  device const uchar *src = q + row * args.cols + 8u * j;
  uint v = 0u;
  for (uint p = 0; p < 8u; p++) v |= uint(src[awq_order[p]] & 0xFu) << (4u * p);
  words[w] = v;
}
