// A minimal wasi_snapshot_preview1 for the bitexact reference module, giving
// the guest the same sealed world as the wazero host in package wasm
// (wasm/wasm.go): no arguments, no environment, no files or preopened
// directories, a wall clock stopped at the Unix epoch, a monotonic clock
// stopped at 1 ns, and a fixed random stream. The reference's outputs do
// not depend on any of these; fixing them makes sure they cannot.
//
// These are exactly the 16 functions the Go wasip1 runtime imports. A
// module importing anything else fails to instantiate with a LinkError
// naming the import, rather than running against a stub.

const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;

const CLOCK_REALTIME = 0;
const CLOCK_MONOTONIC = 1;
const FILETYPE_CHARACTER_DEVICE = 2;

// ProcExit is thrown by proc_exit: the guest's runtime is gone and the
// instance must not be called again.
export class ProcExit extends Error {
  constructor(code) {
    super(`the reference module exited with status ${code}`);
    this.code = code;
  }
}

// makeWASI returns the import object and a function that binds it to the
// instance's memory once instantiated. onOutput(fd, text) receives what the
// guest writes to stdout (1) and stderr (2).
export function makeWASI(onOutput) {
  let memory = null;
  const view = () => new DataView(memory.buffer);
  const bytes = () => new Uint8Array(memory.buffer);
  const decoder = new TextDecoder();
  // xorshift32 from a fixed seed: deterministic, and never all zeros.
  let rnd = 0x9e3779b9;

  const wasi = {
    args_sizes_get(argc, bufSize) {
      view().setUint32(argc, 0, true);
      view().setUint32(bufSize, 0, true);
      return ESUCCESS;
    },
    args_get() { return ESUCCESS; },
    environ_sizes_get(count, bufSize) {
      view().setUint32(count, 0, true);
      view().setUint32(bufSize, 0, true);
      return ESUCCESS;
    },
    environ_get() { return ESUCCESS; },
    clock_time_get(id, _precision, out) {
      let t;
      if (id === CLOCK_REALTIME) t = 0n;
      else if (id === CLOCK_MONOTONIC) t = 1n; // the Go runtime refuses 0
      else return EINVAL;
      view().setBigUint64(out, t, true);
      return ESUCCESS;
    },
    random_get(buf, len) {
      const b = bytes();
      for (let i = 0; i < len; i++) {
        rnd ^= rnd << 13; rnd >>>= 0;
        rnd ^= rnd >>> 17;
        rnd ^= rnd << 5; rnd >>>= 0;
        b[buf + i] = rnd & 0xff;
      }
      return ESUCCESS;
    },
    fd_write(fd, iovs, iovsLen, nwritten) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const v = view();
      let n = 0;
      let text = "";
      for (let i = 0; i < iovsLen; i++) {
        const p = v.getUint32(iovs + 8 * i, true);
        const l = v.getUint32(iovs + 8 * i + 4, true);
        text += decoder.decode(new Uint8Array(memory.buffer, p, l));
        n += l;
      }
      onOutput(fd, text);
      v.setUint32(nwritten, n, true);
      return ESUCCESS;
    },
    fd_close(fd) { return fd <= 2 ? ESUCCESS : EBADF; },
    fd_fdstat_get(fd, out) {
      if (fd > 2) return EBADF;
      const v = view();
      for (let i = 0; i < 24; i++) v.setUint8(out + i, 0);
      v.setUint8(out, FILETYPE_CHARACTER_DEVICE);
      return ESUCCESS;
    },
    fd_fdstat_set_flags(fd) { return fd <= 2 ? ESUCCESS : EBADF; },
    // No preopened directories: the guest's file system is empty.
    fd_prestat_get() { return EBADF; },
    fd_prestat_dir_name() { return EBADF; },
    // Every subscription (a clock, as the Go runtime's idle sleep asks for)
    // fires at once: time does not pass in the guest.
    poll_oneoff(inPtr, outPtr, nsubs, neventsPtr) {
      const v = view();
      for (let i = 0; i < nsubs; i++) {
        const s = inPtr + 48 * i, e = outPtr + 32 * i;
        v.setBigUint64(e, v.getBigUint64(s, true), true); // userdata
        v.setUint16(e + 8, ESUCCESS, true); // error
        v.setUint8(e + 10, v.getUint8(s + 8)); // type
        for (let j = 11; j < 32; j++) v.setUint8(e + j, 0);
      }
      v.setUint32(neventsPtr, nsubs, true);
      return ESUCCESS;
    },
    sched_yield() { return ESUCCESS; },
    proc_exit(code) { throw new ProcExit(code); },
  };
  return {
    imports: { wasi_snapshot_preview1: wasi },
    bind(mem) { memory = mem; },
  };
}
