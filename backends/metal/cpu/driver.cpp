// bitexact: runs the Metal kernels of ../kernels on the CPU (the Linux
// check of backends/metal). One translation unit: metal_compat.h, every
// .metal source, and the dispatcher below. backends/metal/emulator.go
// compiles it with
//
//   g++ -std=c++17 -O2 -ffp-contract=off -fno-fast-math -Wno-attributes
//       -I<dir>/cpu -I<dir>/kernels driver.cpp
//
// and talks to it over stdin/stdout (little-endian):
//
//   request:  "BXRQ", u32 name length, name, u32 grid[3] (threadgroups),
//             u32 group[3] (threads per threadgroup), u32 buffer count,
//             then per buffer u64 length and its bytes
//   response: "BXOK", then per buffer u64 length and its bytes (after the
//             dispatch), or "BXER", u32 length and a message.
//
// Threadgroups run one after another; inside one, every thread is a
// coroutine (ucontext) and the collectives of metal_compat.h are phase
// boundaries where the lanes meet (see there).
#include <metal_stdlib>

#include <string>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "awq.metal"
#include "e2m1.metal"
#include "fp8.metal"
#include "gemv_mxfp4.metal"
#include "gemv_sparse_fp4.metal"
#include "mxfp4.metal"
#include "nvfp4.metal"
#include "sparse24.metal"

namespace metal {
BxGroup *bx_group = nullptr;
}
using namespace metal;

// The attribute values of one thread.
struct Pos {
  uint3 tg;            // threadgroup_position_in_grid
  uint3 tid_in_tg;     // thread_position_in_threadgroup
  uint3 tpig;          // thread_position_in_grid
  uint threads_per_grid;
  ushort lane;         // thread_index_in_simdgroup
  ushort sg;           // simdgroup_index_in_threadgroup
  ushort nsg;          // simdgroups_per_threadgroup
};

typedef std::vector<std::vector<unsigned char>> Buffers;
typedef void (*Entry)(Buffers &b, const Pos &p);

template <class T>
static T *B(Buffers &b, int i) {
  return reinterpret_cast<T *>(b[i].data());
}

// The entry points: buffers in [[buffer(i)]] order, then the attributes
// each kernel declares.
struct Kernel {
  const char *name;
  int nbuf;
  Entry run;
  // sync: the kernel calls simd_* or threadgroup_barrier, so its threads
  // run as coroutines; the others are called one thread after another (a
  // collective there is a fatal error: "called outside a dispatch").
  bool sync;
};
static const Kernel kernels[] = {
    {"e2m1_nvidia", 3,
     [](Buffers &b, const Pos &p) { e2m1_nvidia(B<float>(b, 0), B<uchar>(b, 1), *B<uint>(b, 2), p.tpig.x); }},
    {"e4m3_satfinite", 3,
     [](Buffers &b, const Pos &p) { e4m3_satfinite(B<float>(b, 0), B<uchar>(b, 1), *B<uint>(b, 2), p.tpig.x); }},
    {"nvfp4_amax", 3,
     [](Buffers &b, const Pos &p) {
       nvfp4_amax(B<float>(b, 0), B<atomic_uint>(b, 1), *B<uint>(b, 2), p.tpig.x, p.threads_per_grid, p.lane, p.sg,
                  p.nsg);
     },
     true},
    {"nvfp4_quantize", 6,
     [](Buffers &b, const Pos &p) {
       nvfp4_quantize(B<float>(b, 0), B<uint>(b, 1), B<uchar>(b, 2), B<uchar>(b, 3), B<float>(b, 4),
                      *B<NVFP4Args>(b, 5), p.tpig.x);
     }},
    {"mxfp4_quantize", 4,
     [](Buffers &b, const Pos &p) {
       mxfp4_quantize(B<float>(b, 0), B<uchar>(b, 1), B<uchar>(b, 2), *B<MXFP4Args>(b, 3), p.tpig.x);
     }},
    {"awq_pack", 3,
     [](Buffers &b, const Pos &p) { awq_pack(B<uchar>(b, 0), B<uint>(b, 1), *B<AWQPackArgs>(b, 2), p.tpig.x); }},
    {"sparse24_compress", 4,
     [](Buffers &b, const Pos &p) {
       sparse24_compress(B<uchar>(b, 0), B<uchar>(b, 1), B<uchar>(b, 2), *B<Sparse24Args>(b, 3), p.tpig.x);
     }},
    {"transpose_u8", 3,
     [](Buffers &b, const Pos &p) { transpose_u8(B<uchar>(b, 0), B<uchar>(b, 1), *B<TransposeArgs>(b, 2), p.tpig.x); }},
    {"sparse_fp4_gemv", 8,
     [](Buffers &b, const Pos &p) {
       sparse_fp4_gemv(B<uchar>(b, 0), B<uchar>(b, 1), B<uchar>(b, 2), B<float>(b, 3), B<half>(b, 4), B<int>(b, 5),
                       B<float>(b, 6), *B<SparseFP4Args>(b, 7), p.tg, p.lane, p.sg);
     },
     true},
    {"mxfp4_q8_1_gemv", 4,
     [](Buffers &b, const Pos &p) {
       mxfp4_q8_1_gemv(B<uchar>(b, 0), B<uchar>(b, 1), B<float>(b, 2), *B<MXFP4GemvArgs>(b, 3), p.tg, p.lane, p.sg);
     },
     true},
    // Not a Metal kernel: a self-test of metal_compat.h's software half.
    // Thread 0 converts n float32 values to binary16 bits and all 65536
    // binary16 values back to float32.
    {"bx_half_selftest", 5,
     [](Buffers &b, const Pos &p) {
       if (p.tpig.x != 0) return;
       uint n = *B<uint>(b, 4);
       for (uint i = 0; i < n; i++) B<ushort>(b, 1)[i] = half(B<float>(b, 0)[i]).bits;
       for (uint i = 0; i < 65536; i++) B<float>(b, 3)[i] = float(as_type<half>(B<ushort>(b, 2)[i]));
     }},
};

// ---- the threadgroup scheduler ----

static const size_t kStack = 64 * 1024;

struct Run {
  const Kernel *k;
  Buffers *bufs;
  std::vector<Pos> pos;
  std::vector<BxLane> lanes;
  std::vector<std::vector<char>> stacks;
  BxGroup group;
};
static Run *cur_run;

static void lane_main() {
  Run *r = cur_run;
  int i = r->group.cur;
  r->k->run(*r->bufs, r->pos[i]);
  r->lanes[r->group.cur].state = BX_DONE;
  // uc_link returns to the scheduler.
}

static std::string run_dispatch(const Kernel &k, Buffers &bufs, const uint grid[3], const uint tg[3]) {
  uint nthreads = tg[0] * tg[1] * tg[2];
  if (nthreads == 0 || nthreads > 1024) return "threadgroup size must be 1..1024";
  if (nthreads % 32 != 0 && nthreads > 32) return "threadgroups larger than one SIMD group must be whole SIMD groups";
  Run r;
  r.k = &k;
  r.bufs = &bufs;
  r.pos.resize(nthreads);
  r.lanes.resize(nthreads);
  if (k.sync) r.stacks.resize(nthreads, std::vector<char>(kStack));
  r.group.lanes = r.lanes.data();
  cur_run = &r;
  uint nsg = (nthreads + 31) / 32;
  uint tpg = grid[0] * grid[1] * grid[2] * nthreads;
  for (uint gz = 0; gz < grid[2]; gz++)
    for (uint gy = 0; gy < grid[1]; gy++)
      for (uint gx = 0; gx < grid[0]; gx++) {
        for (uint li = 0; li < nthreads; li++) {
          Pos &p = r.pos[li];
          p.tg = {gx, gy, gz};
          p.tid_in_tg = {li % tg[0], (li / tg[0]) % tg[1], li / (tg[0] * tg[1])};
          p.tpig = {gx * tg[0] + p.tid_in_tg.x, gy * tg[1] + p.tid_in_tg.y, gz * tg[2] + p.tid_in_tg.z};
          p.threads_per_grid = tpg;
          p.lane = (ushort)(li % 32);
          p.sg = (ushort)(li / 32);
          p.nsg = (ushort)nsg;
          if (!k.sync) {
            k.run(bufs, p);  // bx_group is null: a collective here is fatal
            continue;
          }
          BxLane &l = r.lanes[li];
          l.state = BX_RUN;
          getcontext(&l.ctx);
          l.ctx.uc_stack.ss_sp = r.stacks[li].data();
          l.ctx.uc_stack.ss_size = kStack;
          l.ctx.uc_link = &r.group.sched;
          makecontext(&l.ctx, lane_main, 0);
        }
        if (!k.sync) continue;
        bx_group = &r.group;
        for (;;) {
          bool progress = false;
          for (uint li = 0; li < nthreads; li++) {
            if (r.lanes[li].state != BX_RUN) continue;
            r.group.cur = (int)li;
            swapcontext(&r.group.sched, &r.lanes[li].ctx);
            progress = true;
          }
          uint done = 0, barrier = 0;
          for (uint li = 0; li < nthreads; li++) {
            done += r.lanes[li].state == BX_DONE;
            barrier += r.lanes[li].state == BX_BARRIER;
          }
          if (done == nthreads) break;
          // SIMD collectives: a group whose lanes all wait at one.
          for (uint s = 0; s < nsg; s++) {
            BxLane *g = &r.lanes[s * 32];
            uint n = nthreads - s * 32 < 32 ? nthreads - s * 32 : 32;
            uint at = 0, fin = 0;
            for (uint l = 0; l < n; l++) {
              at += g[l].state == BX_SIMD;
              fin += g[l].state == BX_DONE;
            }
            if (at == 0) continue;
            if (n != 32) return "simd collective in a partial SIMD group";
            if (fin != 0) return "simd collective while other lanes of the SIMD group have returned (divergent)";
            if (at != n) continue;  // some lanes still at a barrier: wait
            for (uint l = 1; l < n; l++)
              if (g[l].resolve != g[0].resolve || g[l].arg != g[0].arg)
                return "lanes of one SIMD group are at different collectives (divergent)";
            g[0].resolve(g, g[0].arg);
            for (uint l = 0; l < n; l++) g[l].state = BX_RUN;
            progress = true;
          }
          if (barrier != 0 && barrier + done == nthreads) {
            if (done != 0) return "threadgroup_barrier not reached by every thread (some returned)";
            for (uint li = 0; li < nthreads; li++) r.lanes[li].state = BX_RUN;
            progress = true;
          }
          if (!progress) return "deadlock: lanes wait at different barriers/collectives";
        }
        bx_group = nullptr;
      }
  return "";
}

// ---- the request loop ----

static bool read_full(void *p, size_t n) { return n == 0 || fread(p, 1, n, stdin) == n; }
static void write_full(const void *p, size_t n) {
  if (n && fwrite(p, 1, n, stdout) != n) bx_fatal("write to stdout failed");
}

int main() {
#if defined(__x86_64__)
  // Subnormals must be kept: MXCSR FTZ (bit 15) and DAZ (bit 6) off.
  if (_mm_getcsr() & 0x8040u) bx_fatal("MXCSR has FTZ or DAZ set");
#endif
  for (;;) {
    char magic[4];
    if (!read_full(magic, 4)) return 0;  // EOF: done
    if (std::memcmp(magic, "BXRQ", 4) != 0) bx_fatal("bad request magic");
    uint nlen;
    if (!read_full(&nlen, 4) || nlen > 256) bx_fatal("bad name length");
    std::string name(nlen, '\0');
    uint grid[3], tg[3], nbuf;
    if (!read_full(&name[0], nlen) || !read_full(grid, 12) || !read_full(tg, 12) || !read_full(&nbuf, 4) || nbuf > 64)
      bx_fatal("truncated request");
    Buffers bufs(nbuf);
    for (uint i = 0; i < nbuf; i++) {
      uint64_t n;
      if (!read_full(&n, 8) || n > (uint64_t(1) << 34)) bx_fatal("bad buffer length");
      bufs[i].resize(n + 16);  // slack: a kernel reading a struct from a short buffer stays in bounds
      bufs[i].resize(n);
      if (!read_full(bufs[i].data(), n)) bx_fatal("truncated buffer");
    }
    std::string err;
    const Kernel *k = nullptr;
    for (const Kernel &c : kernels)
      if (name == c.name) k = &c;
    if (!k)
      err = "unknown kernel " + name;
    else if ((int)nbuf != k->nbuf)
      err = "kernel " + name + " takes " + std::to_string(k->nbuf) + " buffers, got " + std::to_string(nbuf);
    else
      err = run_dispatch(*k, bufs, grid, tg);
    if (!err.empty()) {
      uint n = (uint)err.size();
      write_full("BXER", 4);
      write_full(&n, 4);
      write_full(err.data(), n);
    } else {
      write_full("BXOK", 4);
      for (auto &b : bufs) {
        uint64_t n = b.size();
        write_full(&n, 8);
        write_full(b.data(), n);
      }
    }
    fflush(stdout);
  }
}
