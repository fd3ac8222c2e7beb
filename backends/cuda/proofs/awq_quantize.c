// Exhaustive CPU proof of the arithmetic shortcuts in awq_forge_pack
// (backends/cuda/kernels/awq.cu): for every input the kernel can see, the
// shortcut gives the bits the reference recipe gives.
//
// Reference (refimpl/awq's Forge quantizer, the kernel's contract):
//   s = fp16_rn(fdiv_rn(absmax, 7))
//   q = s == 0 ? 0 : clamp(rint_half_even(fdiv_rn(w, s)), -8, 7),  u = q + 8
//   qweight word: nibble p = u of column {0,2,4,6,1,3,5,7}[p]
// Kernel (float32 round-to-nearest-even throughout, fma correctly rounded):
//   s = fp16_rn(RN(a * RN(1/7)))                          (check 2)
//   r = 1/s approximately (rcp.approx.ftz.f32), r = 0 for s == 0
//   t = RN(w r), e = fma(-t, s, w), x = fma(e, r, t)
//   [x = min(max(x, -8), 7) when the warp has a nonzero subnormal scale]
//   bits(RN(x + (2^23 + 8))) - 0x4B000000 = u             (checks 3, 4)
//   word = lo + (hi << 16) - 0xFB000000 with lo, hi the shift-adds of the
//   magic bits b_j = 0x4B000000 + u_j                     (check 5)
//
// What each check covers:
//   1. the compiler's float32 -> fp16 conversion (_Float16) against a
//      bisection on the fp16 grid, on 2M float32 bit patterns (guards the
//      tool used by check 2);
//   2. every finite fp16 amax (0x0000..0x7BFF): fp16_rn(RN(a * RN(1/7)))
//      == fp16_rn(RN(a / 7)), and max a/s over the normal scales (must be
//      below 7.5: then the unclamped path cannot leave [-8, 7]; it prints
//      7.002...);
//   3. s == 0 (r = 0): u == 8 for every finite fp16 w, clamped and not;
//   4. every finite fp16 w (63488) x every positive finite fp16 s (31743),
//      with r = RN(1/s) and with r moved 1, 2 and 4 ulps either way (the
//      proof in awq.cu tolerates |r s - 1| <= 2^-20; rcp.approx.f32 is
//      documented within 1 ulp): the clamped formula against the reference
//      for every pair, and the unclamped one for every pair with s normal
//      and rint(w/s) in [-7, 7] (a superset of the pairs the kernel's fast
//      path sees: there |w| <= amax and amax/s <= 7.003);
//   5. the nibble packing: every 32-bit word P (2^32 of them), with u_j the
//      nibbles P assigns to columns j, rebuilt by the kernel's magic-bit
//      shift-adds, gives P back.
// Not covered here (argued in awq.cu and checked on the GPU against the
// original kernel): the max-abs by packed fp16 max and the bad flag.
//
// Build and run (x86-64 or any target with IEEE binary32, FLT_EVAL_METHOD
// 0; fp contraction is switched off below, a contracted w*r or t+8 would
// change the roundings):
//   cc -O2 -o /tmp/awqv backends/cuda/proofs/awq_quantize.c -lm && /tmp/awqv
//   (add -lpthread on glibc older than 2.34)
//   /tmp/awqv P [THREADS]   only perturbation P ulps in check 4 (THREADS
//                           default: the online CPUs)
// Exit status 0 when every check passes, 1 on any mismatch.
//
// Time: check 4 is about 2.0e9 pairs per perturbation, seven
// perturbations; checks 1-3 and 5 take seconds. On 2 cores (x86-64, gcc
// 12 -O2) the full run took 2 min 26 s (3 min 55 s CPU), about 15 s of
// CPU per perturbation; the time scales down with more cores.
//
// Result (the run above):
//   RN(1/7) bits = 3e124925
//   scale mismatches: 0; max amax/s over normal s: 7.002921130 (must be < 7.5)
//   s==0 mismatches: 0
//   packing mismatches: 0 (all 2^32 words)
//   perturb 0 ulp: pair mismatches 0 (fast-path pairs checked 1180502460)
//   perturb 1 ulp: pair mismatches 0 (fast-path pairs checked 1180502460)
//   perturb -1 ulp: pair mismatches 0 (fast-path pairs checked 1180502460)
//   perturb 2 ulp: pair mismatches 0 (fast-path pairs checked 1180502460)
//   perturb -2 ulp: pair mismatches 0 (fast-path pairs checked 1180502460)
//   perturb 4 ulp: pair mismatches 0 (fast-path pairs checked 1180502460)
//   perturb -4 ulp: pair mismatches 0 (fast-path pairs checked 1180502460)
//   ALL CHECKS PASSED: no mismatch
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0)"
#endif

static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static float h2f(uint16_t h) {  // exact fp16 -> fp32
  uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 31, m = h & 1023;
  if (e == 31) return bitsf(s | 0x7F800000u | (m << 13));
  if (e == 0) { float v = ldexpf((float)m, -24); return s ? -v : v; }
  return bitsf(s | ((e + 112) << 23) | (m << 13));
}
// RN-even fp32 -> fp16 by bisection on the positive fp16 grid (finite
// inputs below 65520).
static uint16_t f2h_manual(float f) {
  double d = fabs((double)f); uint16_t sign = signbit(f) ? 0x8000 : 0;
  if (d == 0) return sign;
  uint16_t lo = 0, hi = 0x7C00;
  while (hi - lo > 1) { uint16_t mid = (lo + hi) / 2; if ((double)h2f(mid) <= d) lo = mid; else hi = mid; }
  double a = h2f(lo), b = (hi == 0x7C00) ? 65536.0 : h2f(hi);
  uint16_t r;
  if (d - a < b - d) r = lo; else if (d - a > b - d) r = hi; else r = (lo & 1) ? hi : lo;
  return sign | r;
}
#ifdef __FLT16_MAX__
static uint16_t f2h(float f) {  // the compiler's correctly rounded conversion
  _Float16 h = (_Float16)f;
  uint16_t u; memcpy(&u, &h, 2); return u;
}
#else
static uint16_t f2h(float f) { return f2h_manual(f); }
#endif

// Reference q (correctly rounded division, rint half even, clamp).
static int ref_q(float w, float s) {
  if (s == 0.0f) return 0;
  float x = w / s;
  float n = nearbyintf(x);
  if (n < -8) n = -8;
  if (n > 7) n = 7;
  return (int)n;
}
// Kernel: bits(y) - 0x4B000000, which must be u = q + 8.
static uint32_t cand_u(float w, float s, float r, int clamp) {
  float t = w * r;
  float e = fmaf(-t, s, w);
  float x = fmaf(e, r, t);
  if (clamp) x = fminf(fmaxf(x, -8.0f), 7.0f);
  float y = x + 8388616.0f;  // 2^23 + 8
  return fbits(y) - 0x4B000000u;
}

static int g_perturb;  // r = nextafter^|k|(RN(1/s)), up for k > 0
static long long g_bad[64], g_cnt[64];
static int g_nthreads = 2;

static void *worker(void *arg) {
  long id = (long)arg;
  long long bad = 0, cnt = 0;
  for (uint32_t sb = 1 + id; sb < 0x7C00; sb += g_nthreads) {
    float s = h2f((uint16_t)sb);
    float r = 1.0f / s;
    for (int k = 0; k < abs(g_perturb); k++) r = nextafterf(r, g_perturb > 0 ? INFINITY : 0.0f);
    int normal = sb >= 0x400;
    for (uint32_t wb = 0; wb < 0x10000; wb++) {
      if ((wb & 0x7C00) == 0x7C00) continue;
      float w = h2f((uint16_t)wb);
      int q = ref_q(w, s);
      uint32_t u = cand_u(w, s, r, 1);  // clamped: every pair
      if (u != (uint32_t)(q + 8)) {
        if (bad++ < 5) printf("CLAMP MISMATCH s=%04x w=%04x want %d got %u\n", sb, wb, q + 8, u);
      }
      float n = nearbyintf(w / s);  // unclamped: s normal, rint in [-7, 7]
      if (normal && n >= -7 && n <= 7) {
        cnt++;
        uint32_t u2 = cand_u(w, s, r, 0);
        if (u2 != (uint32_t)(q + 8)) {
          if (bad++ < 5) printf("FAST MISMATCH s=%04x w=%04x want %d got %u\n", sb, wb, q + 8, u2);
        }
      }
    }
  }
  g_bad[id] = bad;
  g_cnt[id] = cnt;
  return NULL;
}

static long long run_pairs(int perturb) {
  g_perturb = perturb;
  pthread_t th[64];
  for (long i = 0; i < g_nthreads; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  long long bad = 0, cnt = 0;
  for (long i = 0; i < g_nthreads; i++) {
    pthread_join(th[i], NULL);
    bad += g_bad[i];
    cnt += g_cnt[i];
  }
  printf("perturb %d ulp: pair mismatches %lld (fast-path pairs checked %lld)\n", perturb, bad, cnt);
  fflush(stdout);
  return bad;
}

// Check 5: the kernel's packing of the magic bits, for every word.
static long long check_packing(void) {
  long long bad = 0;
  uint32_t p = 0;
  do {
    uint32_t u[8];  // nibble k of p holds column ORDER[k], ORDER = {0,2,4,6,1,3,5,7}
    static const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int k = 0; k < 8; k++) u[order[k]] = (p >> (4 * k)) & 15u;
    uint32_t b[8];
    for (int j = 0; j < 8; j++) b[j] = 0x4B000000u + u[j];
    uint32_t lo = b[0] + (b[2] << 4) + (b[4] << 8) + (b[6] << 12);
    uint32_t hi = b[1] + (b[3] << 4) + (b[5] << 8) + (b[7] << 12);
    uint32_t got = lo + (hi << 16) - 0xFB000000u;
    if (got != p && bad++ < 5) printf("PACK MISMATCH %08x got %08x\n", p, got);
  } while (++p != 0);
  printf("packing mismatches: %lld (all 2^32 words)\n", bad);
  fflush(stdout);
  return bad;
}

int main(int argc, char **argv) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  g_nthreads = ncpu < 1 ? 1 : ncpu > 64 ? 64 : (int)ncpu;
  if (argc > 2) g_nthreads = atoi(argv[2]);
  if (g_nthreads < 1 || g_nthreads > 64) { fprintf(stderr, "threads must be 1..64\n"); return 2; }
  // 1. fp16 conversion cross-check
  for (uint32_t i = 0; i < 2000000; i++) {
    uint32_t u = (uint32_t)(i * 2654435761u);
    float f = bitsf(u);
    if (!isfinite(f) || fabsf(f) > 65519.0f) continue;
    if (f2h(f) != f2h_manual(f)) { printf("f2h mismatch %08x\n", u); return 1; }
  }
  // 2. scale: f2h(RN(a/7)) vs f2h(RN(a*RN(1/7))) over every finite amax
  float inv7 = 1.0f / 7.0f;
  printf("RN(1/7) bits = %08x\n", fbits(inv7));
  int sbad = 0;
  double maxratio = 0;
  for (uint32_t a = 0; a < 0x7C00; a++) {
    float af = h2f((uint16_t)a);
    uint16_t s1 = f2h(af / 7.0f), s2 = f2h(af * inv7);
    if (s1 != s2 && sbad++ < 5) printf("SCALE MISMATCH a=%04x %04x %04x\n", a, s1, s2);
    float s = h2f(s1);
    if (s1 >= 0x400) {
      double ratio = (double)af / (double)s;
      if (ratio > maxratio) maxratio = ratio;
    }
  }
  printf("scale mismatches: %d; max amax/s over normal s: %.9f (must be < 7.5)\n", sbad, maxratio);
  if (!(maxratio < 7.5)) sbad++;
  // 3. s == 0 path (r = 0): u must be 8 for every finite w
  int zbad = 0;
  for (uint32_t wb = 0; wb < 0x10000; wb++) {
    if ((wb & 0x7C00) == 0x7C00) continue;
    float w = h2f((uint16_t)wb);
    if (cand_u(w, 0.0f, 0.0f, 0) != 8 || cand_u(w, 0.0f, 0.0f, 1) != 8) zbad++;
  }
  printf("s==0 mismatches: %d\n", zbad);
  fflush(stdout);
  // 5 (cheap, before the long part).
  long long pbad = check_packing();
  // 4. all (w, s) pairs, r exact-rounded and perturbed.
  long long bad = 0;
  if (argc > 1) {
    bad += run_pairs(atoi(argv[1]));
  } else {
    static const int perturbs[7] = {0, 1, -1, 2, -2, 4, -4};
    for (int i = 0; i < 7; i++) bad += run_pairs(perturbs[i]);
  }
  int ok = !sbad && !zbad && !pbad && !bad;
  printf("%s\n", ok ? "ALL CHECKS PASSED: no mismatch" : "MISMATCH FOUND");
  return ok ? 0 : 1;
}
