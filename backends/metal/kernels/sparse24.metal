// 2:4 compression of E2M1 codes (refimpl/sparse24.Compress): of each group
// of four codes along K two are kept,
//
//   comp[n][t] = v(i0) | v(i1) << 4        group t = codes 4t..4t+3
//   meta[n][p] = m(2p) | m(2p+1) << 4      m(t) = i0 | i1 << 2, i0 < i1
//
// row-major [E][N][K/4] and [E][N][K/8], or transposed per expert to
// [E][K/4][N] and [E][K/8][N] (the dgx-vllm v7 layout,
// Avarok-Cybersecurity/dgx-vllm sparse_fp4_kernel/).
//
// Tie rules (refimpl/sparse24 TieRule, as data): the two values of highest
// rank are kept, a later position replacing an earlier one only when its
// rank is strictly higher (the lower index wins ties). Rank is the
// magnitude (code & 7 orders E2M1 magnitudes; -0 and +0 tie) or the signed
// value (negative codes rank below zero; -0 ties +0). With cutlass, a group
// with fewer than two nonzero codes takes the positions of PyTorch's
// CUTLASS metadata converter: none, only 2 or only 3 -> (2,3); only 0 ->
// (0,2); only 1 -> (1,2).
//
// Integer only: no float schedule.
#include "bitexact.h"

struct Sparse24Args {
  uint experts, n, k;  // k % 8 == 0
  uint signed_rank;    // 0: magnitude, 1: signed value
  uint cutlass;        // 1: CUTLASS positions for degenerate groups
  uint transposed;     // 1: [E][K/4][N] and [E][K/8][N]
};

inline int sp24_rank(uint c, bool signed_rank) {
  int m = int(c & 7u);
  return signed_rank && (c & 8u) != 0u ? -m : m;
}

// Metadata nibble i0 | i1 << 2 of the group g[0..3].
inline uint sp24_select(uint g0, uint g1, uint g2, uint g3, bool signed_rank, bool cutlass) {
  uint g[4] = {g0, g1, g2, g3};
  if (cutlass) {
    uint mask = 0u;
    for (uint i = 0; i < 4u; i++) mask |= uint((g[i] & 7u) != 0u) << i;
    if ((mask & (mask - 1u)) == 0u) {
      if (mask == 1u) return 0u | (2u << 2);
      if (mask == 2u) return 1u | (2u << 2);
      return 2u | (3u << 2);
    }
  }
  uint b0 = 0u, b1 = 1u;
  if (sp24_rank(g[1], signed_rank) > sp24_rank(g[0], signed_rank)) {
    b0 = 1u;
    b1 = 0u;
  }
  for (uint i = 2u; i < 4u; i++) {
    int r = sp24_rank(g[i], signed_rank);
    if (r > sp24_rank(g[b0], signed_rank)) {
      b1 = b0;
      b0 = i;
    } else if (r > sp24_rank(g[b1], signed_rank)) {
      b1 = i;
    }
  }
  return b0 < b1 ? (b0 | (b1 << 2)) : (b1 | (b0 << 2));
}

// One thread per 8 codes (two groups: two comp bytes, one meta byte).
kernel void sparse24_compress(device const uchar *codes [[buffer(0)]],
                              device uchar *comp [[buffer(1)]],
                              device uchar *meta [[buffer(2)]],
                              constant Sparse24Args &args [[buffer(3)]],
                              uint tid [[thread_position_in_grid]]) {
  uint pairs = args.k / 8u;
  if (tid >= args.experts * args.n * pairs) return;
  uint row = tid / pairs, p = tid % pairs;  // row = e*N + n
  uint e = row / args.n, n = row % args.n;
  bool sr = args.signed_rank != 0u, cl = args.cutlass != 0u;
  uint mb = 0u;
  for (uint h = 0; h < 2u; h++) {
    uint t = 2u * p + h;
    device const uchar *g = codes + row * args.k + 4u * t;
    uint m = sp24_select(g[0] & 15u, g[1] & 15u, g[2] & 15u, g[3] & 15u, sr, cl);
    uint v = uint(g[m & 3u]) | (uint(g[m >> 2]) << 4);
    uint at = args.transposed != 0u ? (e * (args.k / 4u) + t) * args.n + n : row * (args.k / 4u) + t;
    comp[at] = uchar(v);
    mb |= m << (4u * h);
  }
  uint at = args.transposed != 0u ? (e * pairs + p) * args.n + n : row * pairs + p;
  meta[at] = uchar(mb);
}

struct TransposeArgs {
  uint experts, rows, cols;
};

// out[e][c][r] = in[e][r][c]: the block scales of the transposed layout.
kernel void transpose_u8(device const uchar *in [[buffer(0)]],
                         device uchar *out [[buffer(1)]],
                         constant TransposeArgs &args [[buffer(2)]],
                         uint i [[thread_position_in_grid]]) {
  uint per = args.rows * args.cols;
  if (i >= args.experts * per) return;
  uint e = i / per, r = (i % per) / args.cols, c = i % args.cols;
  out[e * per + c * args.rows + r] = in[i];
}
