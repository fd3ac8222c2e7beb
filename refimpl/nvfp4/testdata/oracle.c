// Independent oracle for TestOracle (nvfp4) and mxfp4's TestOracle: plain C
// (float is IEEE binary32 on x86-64 SSE; build with -O0 -ffp-contract=off)
// computing the canonical NVFP4 recipe and OCP MXFP4 (floor scale) with its
// own E4M3 and E2M1 encoders: nearest value by exhaustive search in double,
// ties to the even code. Output: oracle.bin = rows*cols float32 inputs, then
// NVFP4 packed, NVFP4 scales, NVFP4 global (float32), MXFP4 packed, MXFP4
// scales.
//
//   gcc -O0 -ffp-contract=off -o oracle oracle.c -lm && ./oracle > oracle.bin
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define R 64
#define C 64
static uint32_t s = 7;
static uint32_t lcg(void) { return s = s * 1664525u + 1013904223u; }
static float fb(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

static double e4m3val(int c) {  // c in 0..126
  int e = c >> 3, m = c & 7;
  return e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
}
static uint8_t e4m3sat(float t) {  // t >= 0, not NaN
  if (t > 464) return 0x7E;
  int best = 0; double bd = INFINITY;
  for (int c = 0; c <= 0x7E; c++) {
    double d = fabs(e4m3val(c) - t);
    if (d < bd || (d == bd && !(c & 1))) { best = c; bd = d; }
  }
  return best;
}
static const double e2[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
static uint8_t e2m1(float q) {  // nvidia profile
  if (q != q) return 7;
  uint8_t sg = signbit(q) ? 8 : 0;
  double a = fabs(q);
  if (a > 6) return sg | 7;
  int best = 0; double bd = INFINITY;
  for (int c = 0; c < 8; c++) {
    double d = fabs(e2[c] - a);
    if (d < bd || (d == bd && !(c & 1))) { best = c; bd = d; }
  }
  return sg | best;
}

int main(void) {
  static float x[R * C];
  for (int i = 0; i < R * C; i++) {
    int kind = lcg() % 8;
    float v;
    if (kind < 4) v = fb((lcg() & 0x807fffff) | ((110 + lcg() % 30) << 23));
    else if (kind < 6) v = (float)((int)(lcg() % 15) - 7) * 0.25f * ldexpf(1, (int)(lcg() % 6) - 3);
    else if (kind == 6) v = 0;
    else {  // any sign and mantissa, exponent field 0 (subnormal) to 139
      uint32_t b = lcg();
      v = fb((b & 0x807fffff) | ((lcg() % 140) << 23));
    }
    x[i] = v;
  }
  for (int i = 0; i < C; i++) x[5 * C + i] = 0;           // a zero row
  for (int i = 0; i < C; i++) x[6 * C + i] = 1.5f;        // an all-equal row
  for (int i = 0; i < C; i++) x[7 * C + i] = ldexpf(1.25f, -130 + i % 8);  // subnormals
  x[9 * C + 3] = fb(0x7fc00000);   // NaN
  x[10 * C + 7] = fb(0x7f800000);  // +Inf
  x[11 * C + 20] = fb(0xff800000); // -Inf
  x[12 * C + 1] = fb(0xffc00001);  // -NaN
  fwrite(x, 4, R * C, stdout);
  // NVFP4 canonical.
  float amax = 0;
  for (int i = 0; i < R * C; i++) { float a = fabsf(x[i]); if (a > amax && a <= 3.40282347e38f) amax = a; }
  float g = 2688.0f / amax;
  if (g > 3.40282347e38f) g = 3.40282347e38f;
  static uint8_t np[R * C / 2], ns[R * C / 16], mp[R * C / 2], ms[R * C / 32];
  for (int b = 0; b < R * C / 16; b++) {
    float bm = 0;
    for (int j = 0; j < 16; j++) { float a = fabsf(x[b * 16 + j]); if (a > bm) bm = a; }
    float six = 6.0f, t1 = bm / six, t = t1 * g;
    uint8_t sc = e4m3sat(t);
    ns[b] = sc;
    float sd = (float)e4m3val(sc), d = sd / g;
    for (int j = 0; j < 16; j++) {
      float xv = x[b * 16 + j], q = d == 0 ? xv * 0.0f : xv / d;
      uint8_t c = e2m1(q);
      np[(b * 16 + j) / 2] |= (j & 1) ? c << 4 : c;
    }
  }
  fwrite(np, 1, sizeof np, stdout);
  fwrite(ns, 1, sizeof ns, stdout);
  fwrite(&g, 4, 1, stdout);
  // MXFP4, floor scale.
  for (int b = 0; b < R * C / 32; b++) {
    float bm = 0; int bad = 0;
    for (int j = 0; j < 32; j++) { float v = x[b * 32 + j]; if (v != v || isinf(v)) bad = 1; else if (fabsf(v) > bm) bm = fabsf(v); }
    uint8_t sc;
    if (bad) sc = 0xFF;
    else if (bm == 0) sc = 0;
    else { int e; frexpf(bm, &e); e = e - 1 - 2; sc = e < -127 ? 0 : e + 127; }
    ms[b] = sc;
    for (int j = 0; j < 32; j++) {
      float q = sc == 0xFF ? NAN : x[b * 32 + j] * ldexpf(1, 127 - sc);
      uint8_t c = e2m1(q);
      mp[(b * 32 + j) / 2] |= (j & 1) ? c << 4 : c;
    }
  }
  fwrite(mp, 1, sizeof mp, stdout);
  fwrite(ms, 1, sizeof ms, stdout);
  return 0;
}
